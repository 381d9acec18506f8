package fleet

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestChildrenPlacement: environment.children takes "" or "local";
// store_base is a commit id, set by the spawner only.
func TestChildrenPlacement(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("c", 40)
	for _, c := range []struct {
		name   string
		env    Environment
		child  bool
		submit bool
		field  string
	}{
		{"local", Environment{Children: ChildrenLocal}, false, true, ""},
		{"anywhere", Environment{}, false, true, ""},
		{"unknown placement", Environment{Children: "elsewhere"}, false, true, "environment.children"},
		{"store_base on a child", Environment{StoreBase: base}, true, false, ""},
		{"store_base not a commit", Environment{StoreBase: "HEAD"}, true, false, "environment.store_base"},
		{"store_base submitted", Environment{StoreBase: base}, false, true, "environment.store_base"},
	} {
		s := TaskSpec{Prompt: "p", Profile: "openai", Environment: c.env}
		var err error
		if c.child {
			s.ParentID, s.RootID, s.Depth = uuid.New(), uuid.New(), 1
		}
		if c.submit {
			err = s.ValidateSubmission()
		} else {
			err = s.Validate()
		}
		var fe *FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != "spec."+c.field):
			t.Errorf("%s: %v, want an error on %s", c.name, err, c.field)
		}
	}
}
