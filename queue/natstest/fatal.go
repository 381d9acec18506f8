package natstest

import (
	"fmt"
	"sync"
)

// fatalCatcher is a server logger that keeps the first fatal error and drops everything else.
// An embedded server that cannot listen (a reserved port taken in between) reports it only as a
// fatal log line and then never becomes ready; catching the line lets a start fail at once, with
// the reason, rather than after readyTimeout.
type fatalCatcher struct {
	mu    sync.Mutex
	fatal error
}

func (l *fatalCatcher) Fatalf(format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fatal == nil {
		l.fatal = fmt.Errorf(format, v...)
	}
}

// err returns the first fatal error logged, or nil.
func (l *fatalCatcher) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fatal
}

func (*fatalCatcher) Noticef(string, ...any) {}
func (*fatalCatcher) Warnf(string, ...any)   {}
func (*fatalCatcher) Errorf(string, ...any)  {}
func (*fatalCatcher) Debugf(string, ...any)  {}
func (*fatalCatcher) Tracef(string, ...any)  {}
