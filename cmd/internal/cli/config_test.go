package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/viper"
)

type inner struct {
	Depth int `mapstructure:"depth"`
}

// Squashed is embedded with squash: its keys are top-level.
type Squashed struct {
	Level int `mapstructure:"level"`
}

type testConfig struct {
	Name     string            `mapstructure:"name"`
	Nested   inner             `mapstructure:"nested"`
	Map      map[string]string `mapstructure:"map"`
	Squashed `mapstructure:",squash"`
}

func TestDecodeFileEnvFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, []byte("name: file\nnested: {depth: 1}\nmap: {a: b}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTFLEET_NESTED_DEPTH", "2")
	t.Setenv("AGENTFLEET_NAME", "env")
	t.Setenv("AGENTFLEET_LEVEL", "4")
	v := viper.New()
	v.Set("name", "flag") // an explicitly set value wins, as a bound flag does
	cfg, err := Decode[testConfig](v, file)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "flag" || cfg.Nested.Depth != 2 || cfg.Map["a"] != "b" || cfg.Level != 4 {
		t.Fatalf("config %+v: want name from the flag, nested.depth from the environment, map from the file, level (squashed) from the environment", cfg)
	}
}

func TestDecodeMissingFileNamesIt(t *testing.T) {
	_, err := Decode[testConfig](viper.New(), filepath.Join(t.TempDir(), "absent.yaml"))
	if err == nil || !strings.Contains(err.Error(), "reading --config") {
		t.Fatalf("err = %v, want it to name --config", err)
	}
}

func TestCheckLoggingNamesBothKeys(t *testing.T) {
	if err := CheckLogging("json", "warn"); err != nil {
		t.Fatal(err)
	}
	err := CheckLogging("xml", "loud")
	if err == nil || !strings.Contains(err.Error(), "log_format") || !strings.Contains(err.Error(), "log_level") {
		t.Fatalf("err = %v, want log_format and log_level named", err)
	}
}
