package natsauth

import (
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/queue"
)

// Conf renders p as the permissions block of a user in a nats-server
// configuration file (nats.conf), indented by indent: what
// deploy/nats/nats.conf holds for each role (a test there compares the
// two).
func Conf(p queue.Permissions, indent string) string {
	var b strings.Builder
	b.WriteString("permissions: {\n")
	section := func(name string, r queue.SubjectRules) {
		if len(r.Allow) == 0 && len(r.Deny) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s  %s: {\n", indent, name)
		for _, l := range []struct {
			key      string
			subjects []string
		}{{"allow", r.Allow}, {"deny", r.Deny}} {
			if len(l.subjects) == 0 {
				continue
			}
			fmt.Fprintf(&b, "%s    %s: [\n", indent, l.key)
			for _, s := range l.subjects {
				fmt.Fprintf(&b, "%s      %q\n", indent, s)
			}
			fmt.Fprintf(&b, "%s    ]\n", indent)
		}
		fmt.Fprintf(&b, "%s  }\n", indent)
	}
	section("publish", p.Publish)
	section("subscribe", p.Subscribe)
	if p.AllowResponses {
		fmt.Fprintf(&b, "%s  allow_responses: true\n", indent)
	}
	fmt.Fprintf(&b, "%s}", indent)
	return b.String()
}
