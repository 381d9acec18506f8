package cli

import (
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// CommonFlags registers the flags both programs take, named after their
// configuration keys (see FlagKey).
func CommonFlags(fs *pflag.FlagSet) {
	fs.String("database-url", "", "postgres:// URL or SQLite file (database_url)")
	fs.String("nats-url", "", "NATS server URL(s), comma-separated (nats.url, default nats://127.0.0.1:4222)")
	fs.String("prefix", "", "subject prefix (prefix, default agentfleet)")
	fs.String("log-format", "", "json or text (log_format, default json)")
	fs.String("log-level", "", "debug, info, warn or error (log_level, default info)")
}

// BindFlags binds every flag of fs but --config to its configuration key,
// so a flag that is set wins over the file and the environment.
func BindFlags(v *viper.Viper, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "config" {
			_ = v.BindPFlag(FlagKey(f.Name), f)
		}
	})
}

// FlagKey is the configuration key of a flag: nats-url is nats.url,
// worker-id is worker_id.
func FlagKey(flag string) string {
	if k, ok := strings.CutPrefix(flag, "nats-"); ok {
		return "nats." + strings.ReplaceAll(k, "-", "_")
	}
	return strings.ReplaceAll(flag, "-", "_")
}
