// The folder opens as a project in WeChat DevTools: the files DevTools reads are there
// and consistent, the styles compile with WeChat's wcsc (the WXML compiles with wcc in
// the page tests), and every event a template binds names a function of its page.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const wcsc = require('miniprogram-compiler/src/wcsc.js'); // returns the compiler's error instead of throwing it

const root = path.resolve(__dirname, '..');
const read = (file) => JSON.parse(fs.readFileSync(path.join(root, file), 'utf8'));
const app = read('app.json');

test('project.config.json: a mini-program project with an AppID, the test and npm folders left out of the upload', () => {
  const project = read('project.config.json');
  assert.equal(project.compileType, 'miniprogram');
  assert.match(project.appid, /^(touristappid|wx[0-9a-f]{16})$/);
  const ignored = project.packOptions.ignore.map((i) => i.value);
  for (const folder of ['node_modules', 'test', 'test-pages']) assert.ok(ignored.includes(folder), folder);
  assert.ok(fs.existsSync(path.join(root, app.sitemapLocation)));
  assert.ok(Array.isArray(read(app.sitemapLocation).rules));
});

test('app.json: every page has its .js, .wxml and .json; the tab pages are pages', () => {
  assert.equal(app.pages.length, 7);
  for (const page of app.pages) {
    for (const ext of ['js', 'wxml', 'json']) assert.ok(fs.existsSync(path.join(root, `${page}.${ext}`)), `${page}.${ext}`);
  }
  const tabs = app.tabBar.list.map((t) => t.pagePath);
  assert.deepEqual(tabs, ['pages/skus/index', 'pages/cart/index', 'pages/orders/index']);
  for (const tab of tabs) assert.ok(app.pages.includes(tab), tab);
  assert.equal(app.pages[0], tabs[0]); // the app opens on the product list
});

test('every .wxss compiles with wcsc', () => {
  const files = ['app', ...app.pages].filter((f) => fs.existsSync(path.join(root, `${f}.wxss`)));
  assert.ok(files.length >= 2);
  const out = wcsc(root, files);
  assert.ok(!(out instanceof Error), out instanceof Error ? out.message : '');
  assert.ok(files.every((f) => `${f}.wxss` in out || `./${f}.wxss` in out), Object.keys(out).join(" "));
});

test('every bind… handler in a template is a function of its page', () => {
  for (const page of app.pages) {
    let options;
    global.Page = (o) => { options = o; };
    global.getApp = () => ({});
    require(path.join(root, `${page}.js`));
    const wxml = fs.readFileSync(path.join(root, `${page}.wxml`), 'utf8');
    const handlers = [...wxml.matchAll(/\b(?:bind|catch)[a-z]+="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(handlers.length > 0, page);
    for (const h of handlers) assert.equal(typeof options[h], 'function', `${page}: ${h}`);
  }
});
