package cli

// Environment variables the programs read besides the configuration keys
// of [Decode]; flags win over them.
const (
	// EnvDatabaseURL names the database when --database-url is not given.
	EnvDatabaseURL = EnvPrefix + "_DATABASE_URL"
	// EnvServer is the dispatcher URL a client command talks to.
	EnvServer = EnvPrefix + "_SERVER"
	// EnvToken is the bearer token a client command sends.
	EnvToken = EnvPrefix + "_TOKEN"
)
