package config

import _ "tollgate/app/harness/all" // the harness names watch.folders accepts, as the binary registers them
