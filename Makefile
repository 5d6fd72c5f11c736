# Convenience targets; the scripts are the real thing (make is not required).
.PHONY: run test verify generate bench
run:
	scripts/run
test:
	scripts/test
verify:
	scripts/verify
generate:
	go generate ./...
bench:
	bench/run
