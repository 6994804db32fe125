const { createApi } = require('./api.js');
const { baseURL } = require('./config.js');

App({
  onLaunch() {
    this.api = createApi({ baseURL, wx });
  },
});
