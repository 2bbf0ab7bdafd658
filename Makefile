# hybridspec: one binary, build/hybridspec, over a static library that the
# tests link too. `make run` and `make test` install missing packages first.

BUILD   ?= build
CC      ?= cc
OPT     ?= -O2 -g
SAN     ?=
PKGS     = gsl jansson
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) $(SAN) -MMD -MP \
           $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -Isim
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -lpthread
LDFLAGS += $(SAN)

LIB_SRC  = $(filter-out sim/main.c, $(wildcard sim/*.c))
TEST_SRC = $(wildcard tests/*.c)
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ = $(TEST_SRC:%.c=$(BUILD)/%.o)

BIN   = $(BUILD)/hybridspec
LIB   = $(BUILD)/libhybridspec.a
TESTS = $(BUILD)/hybridspec-tests

.PHONY: all deps test check run asan test-asan golden clean

all: $(BIN) $(LIB)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BIN): $(BUILD)/sim/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(TESTS): $(TEST_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

deps:
	@sh scripts/install-deps.sh

# The tests: installs what is missing, builds, runs every test program; the
# output ends with "N passed, N failed".
test: deps
	@$(MAKE) --no-print-directory check

check: $(BIN) $(TESTS)
	@sh tests/run.sh $(BUILD)

# The main job: build, then the default experiments, results and plots.
run: deps
	@$(MAKE) --no-print-directory $(BIN)
	@sh scripts/run.sh $(BUILD)

asan:
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="-O1 -g" \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" all build-asan/hybridspec-tests

test-asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="-O1 -g" \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" check

# Rewrites the golden outputs the tests compare against (review the diff).
golden: $(BIN)
	@mkdir -p tests/golden
	$(BIN) run tests/data/small.json -o $(BUILD)/golden --quiet
	cp $(BUILD)/golden/summary.json tests/golden/small.summary.json

clean:
	rm -rf build build-asan

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/sim/main.d
