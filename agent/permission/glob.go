package permission

import (
	"errors"
	"regexp"
	"strings"
	"sync"
)

// globCache holds compiled globs; policies are few and checked often.
var globCache sync.Map // string -> *regexp.Regexp

// compileGlob turns a glob (see the package doc) into an anchored regular
// expression. "" compiles to match everything.
func compileGlob(glob string) (*regexp.Regexp, error) {
	if re, ok := globCache.Load(glob); ok {
		return re.(*regexp.Regexp), nil
	}
	var b strings.Builder
	b.WriteString(`^(?s:`)
	if glob == "" {
		b.WriteString(`.*`)
	}
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				return nil, errors.New("has a '[' without its ']': close the class or escape it as [[]")
			}
			class := glob[i+1 : i+1+end]
			if class == "" {
				return nil, errors.New("has an empty class []")
			}
			if class[0] == '!' {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errors.New("is not a valid glob: " + err.Error())
	}
	globCache.Store(glob, re)
	return re, nil
}

// globMatch reports whether s matches glob; an invalid glob matches nothing
// (Validate refuses it before a policy is used).
func globMatch(glob, s string) bool {
	if glob == "" || glob == "*" {
		return true
	}
	re, err := compileGlob(glob)
	return err == nil && re.MatchString(s)
}
