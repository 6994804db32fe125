module github.com/Admiral-Piett/goaws

go 1.18

require (
	github.com/google/uuid v1.6.0
	github.com/gorilla/mux v1.8.0
	github.com/gorilla/schema v1.4.1
	github.com/mitchellh/copystructure v1.2.0
	github.com/sirupsen/logrus v1.9.0
)

require (
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	golang.org/x/sys v0.13.0 // indirect
)
