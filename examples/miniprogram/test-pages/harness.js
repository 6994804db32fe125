// Renders the mini-program's pages under node for the page tests: miniprogram-simulate
// (WeChat's exparser component framework on a jsdom document, with the WXML compiled by
// the official wcc compiler that miniprogram-compiler ships), a fake wx (fakewx.js) as
// the global wx, and getApp() holding a real api.js object on that wx.
//
// miniprogram-simulate builds components only, so Page(options) is registered here the way
// WeChat's documentation allows a page to be built with Component: lifecycle and other
// functions as methods, the other custom fields copied onto each instance. The framework's
// part is played by the tests: they call onLoad(query), onShow(), onPullDownRefresh() and
// onReachBottom() as WeChat would.
'use strict';
const path = require('node:path');
const { JSDOM } = require('jsdom');

const jsdom = new JSDOM('<!doctype html><html><body></body></html>');
global.window = jsdom.window;
global.document = jsdom.window.document;
global.CustomEvent = jsdom.window.CustomEvent; // node has its own, which jsdom refuses
const simulate = require('miniprogram-simulate');
const { createApi } = require('../api.js');
const fakewx = require('./fakewx.js');

const root = path.resolve(__dirname, '..');

global.Page = (options) => {
  const methods = {};
  const fields = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === 'data') continue;
    if (typeof value === 'function') methods[key] = value;
    else fields[key] = value;
  }
  global.Component({
    data: options.data,
    methods,
    lifetimes: {
      created() {
        Object.assign(this, structuredClone(fields));
      },
    },
  });
};

/**
 * openPage renders pages/<name>/index with wx as the global wx and getApp() → { api,
 * refundWindowSeconds }, then calls onLoad(query) (and onShow when show is set). The
 * api's waits (Retry-After, polling) are recorded in waits instead of slept.
 */
function openPage(name, { wx, query = {}, refundWindowSeconds = 0, show = false, random = () => 0 }) {
  const waits = [];
  global.wx = wx;
  const api = createApi({
    baseURL: 'https://api.example.test', wx, random,
    sleep: async (ms) => { waits.push(ms); },
  });
  global.getApp = () => ({ api, refundWindowSeconds });
  const id = simulate.load(path.join(root, 'pages', name, 'index'), { rootPath: root });
  const page = simulate.render(id);
  page.attach(document.createElement('parent-wrapper'));
  if (page.instance.onLoad) page.instance.onLoad(query);
  if (show) page.instance.onShow();
  return { page, wx, api, waits };
}

/** settle waits until no wx.request is in flight and the page's awaits have run. */
async function settle(wx) {
  for (let quiet = 0; quiet < 5;) {
    await new Promise((r) => setImmediate(r));
    quiet = wx.inflight === 0 ? quiet + 1 : 0;
  }
}

/** el: the element with this selector (#id or .class), or undefined. */
function el(page, selector) {
  return page.querySelector(selector);
}

/** text: the text shown by the element, '' when it is not rendered. */
function text(page, selector) {
  const e = el(page, selector);
  return e ? e.dom.textContent.trim() : '';
}

/** texts: the text of every element matching selector. */
function texts(page, selector) {
  return page.querySelectorAll(selector).map((e) => e.dom.textContent.replace(/\s+/g, ' ').trim());
}

/**
 * attr: an attribute of a built-in component (button disabled, loading, …) as the
 * compiled template set it. miniprogram-simulate renders built-ins as bare elements and
 * keeps their attributes on the node's virtual-tree record (_vt.attrs).
 */
function attr(page, selector, name) {
  const e = el(page, selector);
  if (!e) throw new Error(`${selector} is not rendered`);
  const found = (e._exparserNode._vt.attrs || []).find((a) => a.name === name);
  return found ? found.value : undefined;
}

/**
 * tap dispatches a tap on the element, as a buyer's finger does, and waits for the
 * handler to start (the simulator delivers events a microtask later).
 */
async function tap(page, selector) {
  const e = typeof selector === 'string' ? el(page, selector) : selector;
  if (!e) throw new Error(`${selector} is not rendered`);
  e.dispatchEvent('tap');
  await new Promise((r) => setImmediate(r));
}

module.exports = { ...fakewx, openPage, settle, el, text, texts, attr, tap };
