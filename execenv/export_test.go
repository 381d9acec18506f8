package execenv

// DropConnection closes the current SSH connection under the environment's
// feet, as a network failure would.
func DropConnection(s *SSH) {
	s.mu.Lock()
	c := s.cur
	s.mu.Unlock()
	if c != nil {
		_ = c.client.Close()
		<-c.done
	}
}
