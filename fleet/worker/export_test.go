package worker

// LoadHistory is loadHistory for the tests of package worker_test: the
// recorded turns of a session, decoded.
var LoadHistory = loadHistory
