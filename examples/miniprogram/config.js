// Where the API is: the deployed ApiUrl output, or the local stack for the simulator.
module.exports = { baseURL: 'http://127.0.0.1:3000' };
