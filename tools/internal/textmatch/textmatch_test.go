package textmatch

import "testing"

func TestPunct(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  “quoted” ", `"quoted"`},
		{"it’s — a\u00a0test", "it's - a test"},
		{"plain", "plain"},
	}
	for _, tt := range tests {
		if got := Punct(tt.in); got != tt.want {
			t.Errorf("Punct(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if !IsSpace('\u3000') || IsSpace('x') {
		t.Error("IsSpace")
	}
}
