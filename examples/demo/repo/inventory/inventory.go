// Package inventory counts stock safely from many goroutines.
package inventory

import "sync"

// Stock is a count of one article.
type Stock struct {
	mu    sync.Mutex
	count int
}

// Add changes the count by n.
func (s *Stock) Add(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count += n
}

// Count returns the current count.
func (s Stock) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}
