package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"tollgate/app/doctor"
)

// Doctor is `tollgate doctor [--home DIR] [--json]`.
func Doctor(ctx context.Context, args []string, stdio IO, version string) error {
	fset, common := newFlags("doctor", stdio, false)
	asJSON := fset.Bool("json", false, "print the report as JSON (the shape of GET /v1/doctor)")
	fset.Usage = func() {
		fmt.Fprintln(stdio.Stderr, `usage: tollgate doctor [--home DIR] [--json]

Checks that tollgate can guard: WebKitGTK and GTK, a display, a tray host,
notifications, the config, the token file, the database, the running
tollgate and its api.json, each harness integration and autostart. Prints
the command that fixes each problem. Exit status 0 when nothing needed is
missing (warnings allowed), 1 otherwise.`)
		fset.PrintDefaults()
	}
	dir, err := parseHome(fset, common, args)
	if err != nil {
		return err
	}
	rep := doctor.Doctor(ctx, dir, doctor.DoctorOptions{Version: version})
	if *asJSON {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		doctor.PrintDoctor(stdio.Stdout, rep)
	}
	if !rep.OK {
		return errFailed // the report says what is missing
	}
	return nil
}
