// Preloaded into a server under test (NODE_OPTIONS=--import): Date.now() advances at least one
// millisecond at every reading, so code that reads the clock twice where it means one moment
// shows the difference every time instead of once in a while.
const realNow = Date.now;
let readings = 0;
Date.now = () => realNow() + readings++;
