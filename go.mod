module tollgate

go 1.26
