// The delivery address: wx.chooseAddress opens WeChat's own address picker, whose answer
// POST /orders takes as `address` and PUT /orders/{orderId}/address as its body, as it
// is (WeChat developer documentation,
// wx.chooseAddress: https://developers.weixin.qq.com/miniprogram/dev/api/open-api/address/wx.chooseAddress.html;
// app.json declares it in requiredPrivateInfos, as that page asks of mini-programs
// released after 2022-07-14). A buyer who once refused the address permission gets
// "chooseAddress:fail auth deny" at once, without a dialog: the page then explains and
// offers WeChat's settings page (wx.openSetting, https://developers.weixin.qq.com/miniprogram/dev/api/open-api/setting/wx.openSetting.html,
// which opens only after a tap of the buyer: the modal's confirm is one), and asks again
// once the permission (scope.address) is given there.
'use strict';
const { t } = require('./i18n.js');

/** Where the last address chosen is kept, for the next checkout. */
const ADDRESS_KEY = 'stockguard.address';

/**
 * @typedef {import('./api.js').Address} Address
 * @typedef {Pick<WechatMiniprogram.Wx, 'chooseAddress' | 'openSetting' | 'showModal' |
 *   'getStorageSync' | 'setStorageSync'>} Wx
 */

/**
 * fromPicker: the picker's answer as it is (a copy): the API takes every field
 * wx.chooseAddress answers.
 * @param {WechatMiniprogram.ChooseAddressSuccessCallbackResult} res
 * @returns {Address}
 */
function fromPicker(res) {
  return { ...res };
}

/**
 * denied: the picker failed because the buyer refused (now or before) the permission.
 * @param {string} errMsg
 * @returns {boolean}
 */
function denied(errMsg) {
  return /auth deny|auth denied|authorize/.test(errMsg);
}

/**
 * choose: one wx.chooseAddress, as a Promise of the address or of its errMsg.
 * @param {Wx} wx
 * @returns {Promise<{ address?: Address, errMsg: string }>}
 */
function choose(wx) {
  return new Promise((resolve) => {
    wx.chooseAddress({
      success: (res) => resolve({ address: fromPicker(res), errMsg: res.errMsg }),
      fail: (err) => resolve({ errMsg: err.errMsg }),
    });
  });
}

/**
 * pickAddress lets the buyer choose an address and keeps it. Resolves to the address, or
 * to null when the buyer closed the picker or refused the permission and did not give it
 * in the settings; rejects with { errMsg } when the picker failed otherwise.
 * @param {Wx} wx
 * @returns {Promise<Address | null>}
 */
async function pickAddress(wx) {
  let got = await choose(wx);
  if (!got.address && denied(got.errMsg)) {
    const { confirm } = await wx.showModal({
      title: t('addressDeniedTitle'), content: t('addressDenied'), confirmText: t('goToSettings'),
    });
    if (!confirm) return null;
    const settings = await wx.openSetting({});
    if (!settings.authSetting['scope.address']) return null;
    got = await choose(wx);
  }
  if (got.address) {
    try {
      wx.setStorageSync(ADDRESS_KEY, got.address);
    } catch (err) {
      // Not kept: chosen again next time.
    }
    return got.address;
  }
  if (/cancel/.test(got.errMsg) || denied(got.errMsg)) return null;
  throw { errMsg: got.errMsg };
}

/**
 * keptAddress: the address chosen last time, null when none.
 * @param {Pick<Wx, 'getStorageSync'>} wx
 * @returns {Address | null}
 */
function keptAddress(wx) {
  try {
    const a = wx.getStorageSync(ADDRESS_KEY);
    return a && typeof a.userName === 'string' && typeof a.detailInfo === 'string' ? a : null;
  } catch (err) {
    return null;
  }
}

/**
 * addressLines: the address as the buyer reads it: name and phone, then the place.
 * @param {Address} a
 * @returns {{ who: string, where: string }}
 */
function addressLines(a) {
  return { who: `${a.userName} ${a.telNumber}`, where: `${a.provinceName}${a.cityName}${a.countyName}${a.detailInfo}` };
}

module.exports = { ADDRESS_KEY, pickAddress, keptAddress, addressLines };
