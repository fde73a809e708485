# The two commands a new user needs: `make demo` and `make test`.
BUILD_DIR ?= build
JOBS ?= 2

.PHONY: deps configure build demo test bench format clean

deps:
	@tools/install_deps.sh

configure:
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j$(JOBS)

demo: deps build
	$(BUILD_DIR)/pipetwin simulate --trace $(BUILD_DIR)/quickstart.trace.json

test: deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

bench: deps build
	$(BUILD_DIR)/pipetwin_bench

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
