package fleet

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestDecodeWaitingFor(t *testing.T) {
	t.Parallel()
	child := uuid.New()
	wf, err := DecodeWaitingFor([]byte(`{"wait_id":"3","children":["` + child.String() + `"],"approvals":[{"call_id":"c1","tool":"shell","rule":"r"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if wf.WaitID != "3" || len(wf.Children) != 1 || wf.Children[0] != child {
		t.Fatalf("decoded %+v", wf)
	}
	if _, ok := wf.Approval("c1"); !ok {
		t.Fatalf("call c1 is not pending in %+v", wf)
	}
	for _, empty := range []string{"", "null"} {
		wf, err := DecodeWaitingFor([]byte(empty))
		if err != nil || wf.WaitID != "" || wf.Children != nil || wf.Approvals != nil {
			t.Errorf("DecodeWaitingFor(%q) = %+v, %v; want the zero value", empty, wf, err)
		}
	}
	for _, bad := range []string{`{"children":"x"}`, `[1]`, `{`} {
		_, err := DecodeWaitingFor([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), "waiting_for") {
			t.Errorf("DecodeWaitingFor(%q) = %v; want an error naming waiting_for", bad, err)
		}
	}
}
