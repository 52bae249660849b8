package sqlite

import "database/sql"

// Every multi-row read goes through eachRow (or collect, built on it), so
// the rows are always closed — before the next statement of a transaction
// runs — and an error that ends the iteration early (rows.Err) is never
// mistaken for the end of the rows.

// eachRow calls fn for every row of rows and closes them. It returns the
// first error fn returns, which ends the read, or else the iteration's.
func eachRow(rows *sql.Rows, fn func(*sql.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// collect reads every row of rows with scan, in order, and closes them. It
// returns the rows read before the first error, scan's or the iteration's.
func collect[T any](rows *sql.Rows, scan func(*sql.Rows) (T, error)) ([]T, error) {
	var out []T
	err := eachRow(rows, func(rows *sql.Rows) error {
		v, err := scan(rows)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// scanValue reads a row of one column.
func scanValue[T any](rows *sql.Rows) (T, error) {
	var v T
	err := rows.Scan(&v)
	return v, err
}
