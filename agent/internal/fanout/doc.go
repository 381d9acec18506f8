// Package fanout delivers one stream of values to many subscribers without
// ever blocking the publisher: the agent session's events go out through it.
//
// A Hub numbers each value it publishes (1, 2, 3... with no gaps, through
// Config.Stamp, under the lock that orders delivery, so every subscriber sees
// the numbers in increasing order) and appends it to each subscriber's own
// queue. A subscriber that holds Config.Buffer values or more loses the
// values Config.Droppable accepts, and counts them in Dropped; every other
// value is queued whatever the length, so the queue of a subscriber that
// never reads grows by the values that cannot be dropped only.
//
// Closing the hub ends each subscription once its reader has drained what is
// queued; closing a subscription discards what it holds and stops delivery
// to it at once.
package fanout
