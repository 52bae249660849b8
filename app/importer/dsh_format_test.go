package importer_test

// The tests of this package read every format through Parse, dsh's among
// them (syntheticLogs, FuzzDSH, the zstd and limit tests): importing
// app/importer/dsh here registers it for the whole test binary, the
// package's own tests included. An internal test cannot import it (dsh
// imports this package).
import _ "tollgate/app/harness/dsh"
