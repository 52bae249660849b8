package follow

import _ "tollgate/app/harness/all" // every harness's format, as the binary links them
