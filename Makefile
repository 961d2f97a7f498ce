# The two commands of the README:
#   make run   sets everything up and runs the assistant on the default microphone
#   make test  sets everything up and runs the whole test suite
.PHONY: run test setup setup-test lint bench clean

run: setup
	.venv/bin/mavend run

test: setup-test
	scripts/test.sh

setup:
	scripts/setup.sh run

setup-test:
	scripts/setup.sh test

lint:
	.venv/bin/ruff check mavend wakeword tests bench scripts

clean:
	rm -rf .venv build dist *.egg-info .pytest_cache .ruff_cache
