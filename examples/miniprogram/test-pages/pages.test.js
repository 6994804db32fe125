// The page tests, in one process: the DOM, the simulator and the compiled WXML are set
// up once for all pages (a process per page would spend most of its time on that).
'use strict';
for (const name of ['skus', 'sku', 'skuqueue', 'cart', 'pay', 'orders', 'order', 'aftersale']) {
  require(`./pages/${name}.js`);
}
