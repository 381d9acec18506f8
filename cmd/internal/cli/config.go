package cli

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/spf13/viper"
)

// EnvPrefix starts every configuration variable: nats.url is
// AGENTFLEET_NATS_URL.
const EnvPrefix = "AGENTFLEET"

// Decode reads a T from v: the file (YAML, JSON or TOML; none when empty),
// then AGENTFLEET_* variables for every key of T's mapstructure tags, then
// the flags already bound to v, each winning over the one before. It does
// not fill defaults or validate.
func Decode[T any](v *viper.Viper, file string) (T, error) {
	var cfg T
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	bindEnvKeys(v, reflect.TypeFor[T](), "")
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return cfg, fmt.Errorf("reading --config %s: %w", file, err)
		}
	}
	if err := v.Unmarshal(&cfg); err != nil {
		return cfg, fmt.Errorf("decoding the configuration: %w", err)
	}
	return cfg, nil
}

// bindEnvKeys binds every key of t's mapstructure tags to its variable:
// AutomaticEnv alone only sees keys viper already knows. Maps have no
// fixed keys and come from the file only.
func bindEnvKeys(v *viper.Viper, t reflect.Type, prefix string) {
	for f := range t.Fields() {
		tag, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		switch {
		case tag == "-" || !f.IsExported():
		case opts == "squash":
			bindEnvKeys(v, f.Type, prefix)
		case f.Type.Kind() == reflect.Struct:
			bindEnvKeys(v, f.Type, prefix+tag+".")
		case f.Type.Kind() != reflect.Map:
			_ = v.BindEnv(prefix + tag)
		}
	}
}

// Config is what Load needs of a configuration type.
type Config[T any] interface {
	WithDefaults() T
	Validate() error
}

// Load is Decode, then the type's defaults, then its validation: the
// configuration a command runs with, or the error naming the field.
func Load[T Config[T]](v *viper.Viper, file string) (T, error) {
	cfg, err := Decode[T](v, file)
	if err != nil {
		return cfg, err
	}
	cfg = cfg.WithDefaults()
	return cfg, cfg.Validate()
}
