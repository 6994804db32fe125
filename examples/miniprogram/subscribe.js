// The one-time subscribe messages asked for at checkout (wx.requestSubscribeMessage).
'use strict';

/**
 * askSubscriptions asks the buyer for the one-time subscribe templates
 * (wx.requestSubscribeMessage, at most 3 a call; WeChat shows the dialog only from a
 * tap) and resolves to the ids accepted; [] when there are none to ask for, the buyer
 * refused, or the dialog failed.
 * @param {string[]} tmplIds
 * @returns {Promise<string[]>}
 */
function askSubscriptions(tmplIds) {
  if (tmplIds.length === 0) return Promise.resolve([]);
  return new Promise((resolve) => {
    wx.requestSubscribeMessage({
      tmplIds: tmplIds.slice(0, 3),
      success(res) {
        const answers = /** @type {Record<string, string>} */ (/** @type {unknown} */ (res));
        resolve(tmplIds.filter((id) => answers[id] === 'accept'));
      },
      fail() {
        resolve([]);
      },
    });
  });
}

module.exports = { askSubscriptions };
