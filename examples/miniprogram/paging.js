// Paging for the list pages (products, my orders): the API answers a page of items and a
// `next` cursor, absent on the last page; the following page is asked for with
// ?after=<next> (tools/internal/openapi/openapi.yaml, parameter After and schema Next).
'use strict';
const { messageFor } = require('./view.js');

/**
 * The data a list page renders.
 * @template T
 * @typedef {{ items: T[], next: string, end: boolean, loading: boolean, loaded: boolean,
 *   error: string }} ListData
 */

/**
 * The part of a list page that loadPage uses.
 * @template T
 * @typedef {{ data: ListData<T>, setData(data: Partial<ListData<T>>): void }} ListPage
 */

/**
 * loadPage loads the first page again (reset, e.g. pull-down) or the page after the
 * last one shown, and appends it; a call while one is running, or past the end, does
 * nothing. A failure shows messageFor's text and keeps what was shown.
 * @template T
 * @param {ListPage<T>} page
 * @param {boolean} reset
 * @param {(after: string) => Promise<{ items: T[], next?: string }>} fetch
 * @returns {Promise<void>}
 */
async function loadPage(page, reset, fetch) {
  if (page.data.loading || (!reset && page.data.end)) return;
  page.setData({ loading: true, error: '' });
  try {
    const got = await fetch(reset ? '' : page.data.next);
    page.setData({
      items: reset ? got.items : page.data.items.concat(got.items),
      next: got.next || '',
      end: !got.next,
    });
  } catch (err) {
    page.setData({ error: messageFor(err) });
  } finally {
    page.setData({ loading: false, loaded: true });
  }
}

/**
 * listHandlers are a list page's paging handlers over fetch: more(reset) (loadPage), a
 * pull-down that loads the first page again, and the next page at the bottom.
 * @template T
 * @param {(after: string) => Promise<{ items: T[], next?: string }>} fetch
 */
function listHandlers(fetch) {
  return {
    /**
     * @this {ListPage<T>}
     * @param {boolean} reset
     */
    more(reset) {
      return loadPage(this, reset, fetch);
    },
    /** @this {ListPage<T> & { more(reset: boolean): Promise<void> }} */
    onPullDownRefresh() {
      this.more(true).then(() => wx.stopPullDownRefresh());
    },
    /** @this {ListPage<T> & { more(reset: boolean): Promise<void> }} */
    onReachBottom() {
      this.more(false);
    },
  };
}

/**
 * emptyList is a list page's data before its first load.
 * @template T
 * @returns {ListData<T>}
 */
function emptyList() {
  return { items: [], next: '', end: false, loading: false, loaded: false, error: '' };
}

module.exports = { loadPage, listHandlers, emptyList };
