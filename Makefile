# hybridspec: one binary, build/hybridspec, over a static library that the
# tests link too. `make run` and `make test` install missing packages first.

# make MPI=1: build-mpi/, where "hybridspec sweep" spreads runs over mpirun ranks
ifeq ($(MPI),1)
BUILD   ?= build-mpi
CC       = mpicc
CFLAGS  += -DHS_MPI
endif
BUILD   ?= build
CC      ?= cc
OPT     ?= -O2 -g
SAN     ?=
PKGS     = gsl jansson
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L -ffp-contract=off $(OPT) $(WARN) $(SAN) -MMD -MP \
           $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -Ibase -Ikernels -Imodels -Isim -Icalib -Ideploy -Istudy
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null || \
	     echo -lgsl -lgslcblas -ljansson) -lm -lpthread -ldl
LDFLAGS += $(SAN)

KERN_SRC = kernels/q4.c kernels/q8.c kernels/f16.c kernels/kern.c kernels/pool.c
# The layers, each a library over the ones before it (docs/design.md):
# base, kernels, models, sim, calib, deploy, study; cli (the command line) on top,
# the only folder whose headers the others cannot see.
LIB_SRC  = $(wildcard base/*.c) $(KERN_SRC) \
           kernels/kern_avx2.c kernels/kern_avx512.c kernels/kbench.c \
           kernels/gk.c kernels/gbench.c \
           $(wildcard models/*.c sim/*.c calib/*.c deploy/*.c study/*.c)
CLI_SRC  = $(wildcard cli/*.c)
TEST_SRC = $(filter-out tests/kmain.c, $(wildcard tests/*.c))
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ = $(TEST_SRC:%.c=$(BUILD)/%.o)

BIN   = $(BUILD)/hybridspec
LIB   = $(BUILD)/libhybridspec.a
TESTS = $(BUILD)/hybridspec-tests

# The GPU kernels (kernels/cuda) become a plugin beside the binary, which
# opens it only for GPU work (kernels/gk.h); built whenever nvcc is found.
NVCC ?= $(shell command -v nvcc 2>/dev/null || \
	  { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
ifneq ($(NVCC),)
CUDA_LIB  = $(BUILD)/hybridspec-cuda.so
CUDA_HOME = $(patsubst %/bin/,%,$(dir $(NVCC)))
NVFLAGS   = -O3 -std=c++17 -Xcompiler -fPIC,-Wall,-Wextra -Ibase -Ikernels \
	    -gencode arch=compute_80,code=sm_80 \
	    -gencode arch=compute_90,code=[sm_90,compute_90]
ifeq ($(WERROR),1)
NVFLAGS  += -Werror all-warnings -Xcompiler -Werror
endif
endif

.PHONY: FORCE all deps deps-fuzz test check run asan test-asan golden clean fuzz \
	fuzz-build valgrind validate

all: $(BIN) $(LIB) $(CUDA_LIB)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# the AVX2 kernels alone are built for AVX2; kern.c checks the CPU first
$(CLI_OBJ): CFLAGS += -Icli

# hybridspec --version: the commit and the build's options, rewritten only
# when they change (so that an unchanged tree relinks nothing)
$(BUILD)/version.h: FORCE
	@mkdir -p $(BUILD)
	@printf '#define HS_COMMIT "%s"\n#define HS_BUILD_OPTS "%s"\n' \
		"$$(git describe --always --dirty 2>/dev/null || echo unknown)" \
		"CC=$(CC) OPT=$(OPT)$(if $(SAN), SAN=$(SAN))$(if $(filter 1,$(MPI)), MPI=1)$(if $(filter 1,$(WERROR)), WERROR=1), CUDA plugin: $(if $(NVCC),built,not built (no nvcc))" \
		>$@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/cli/main.o: $(BUILD)/version.h
$(BUILD)/cli/main.o: CFLAGS += -I$(BUILD)
FORCE:

AVX2_FLAGS = -mavx2 -mfma -mf16c
$(BUILD)/kernels/kern_avx2.o: CFLAGS += $(AVX2_FLAGS)
$(BUILD)/kernels/kern_avx512.o: CFLAGS += -mavx512f -mavx512vl -mavx512bw \
	$(AVX2_FLAGS)

# The kernel tests for aarch64 (NEON), static, run under qemu-aarch64.
ARM_CC   = aarch64-linux-gnu-gcc
ARM_SRC  = $(KERN_SRC) kernels/kern_neon.c base/err.c base/mem.c tests/harness.c \
           tests/test_kernels.c tests/kmain.c
ARM_TEST = $(BUILD)/aarch64/kernel-tests
$(ARM_TEST): $(ARM_SRC) $(wildcard kernels/*.h base/err.h base/mem.h tests/harness.h)
	@mkdir -p $(dir $@)
	$(ARM_CC) -std=c11 -D_POSIX_C_SOURCE=200809L -O2 $(WARN) -Ibase -Ikernels \
		-static -o $@ $(ARM_SRC) -lm -lpthread

# The kernel tests again with the avx-vnni set's vpdpbusd in its EVEX form
# (kern.h, KERN_VNNI_EVEX), for CPUs with AVX-512 VNNI and no AVX-VNNI:
# kern.o and kern_avx2.o rebuilt, the rest from the library.
EVEX_DIR  = $(BUILD)/vnni-evex
EVEX_TEST = $(EVEX_DIR)/kernel-tests
EVEX_OBJ  = $(EVEX_DIR)/kern.o $(EVEX_DIR)/kern_avx2.o $(EVEX_DIR)/kmain.o \
            $(BUILD)/tests/test_kernels.o $(BUILD)/tests/harness.o
$(EVEX_DIR)/%.o: kernels/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DKERN_VNNI_EVEX -c -o $@ $<
$(EVEX_DIR)/kmain.o: tests/kmain.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<
$(EVEX_DIR)/kern_avx2.o: CFLAGS += $(AVX2_FLAGS)
$(EVEX_TEST): $(EVEX_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(CUDA_LIB): $(wildcard kernels/cuda/*.cu kernels/cuda/*.h) kernels/gk.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -shared -o $@ $(filter %.cu,$^) -lcublas \
		-Xlinker -rpath,$(CUDA_HOME)/lib64

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(TESTS): $(TEST_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# installs what is missing, then proves each toolchain by use (a native and
# an aarch64 program run, a PNG drawn); deps-fuzz adds clang's libFuzzer
deps:
	@sh scripts/install-deps.sh

deps-fuzz:
	@sh scripts/install-deps.sh fuzz

# The tests: installs what is missing, builds, runs every test program; the
# output ends with "N passed, N failed".
test: deps
	@$(MAKE) --no-print-directory check

check: $(BIN) $(TESTS) $(ARM_TEST) $(EVEX_TEST) $(CUDA_LIB)
	@sh tests/run.sh $(BUILD)

# The main job: build, then the default experiments, results and plots.
run: deps
	@$(MAKE) --no-print-directory $(BIN)
	@sh scripts/run.sh $(BUILD)

# the real deployment on loopback against the simulator (docs/deploy.md;
# about 7 minutes on 2 cores): the network-bound sweep, then the handover
# start's points and the hand-back's
validate: deps
	@$(MAKE) --no-print-directory $(BIN)
	$(BIN) validate configs/validate/loopback.json -o results/runs/validate-loopback --overwrite
	$(BIN) validate configs/validate/handover.json -o results/runs/validate-handover --overwrite
	$(BIN) validate configs/validate/handback.json -o results/runs/validate-handback --overwrite

asan:
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="-O1 -g" \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" all build-asan/hybridspec-tests

test-asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="-O1 -g" \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" check

# Rewrites the golden outputs the tests compare against (review the diff).
golden: $(BIN)
	@mkdir -p tests/golden
	$(BIN) run tests/data/small.json -o $(BUILD)/golden --overwrite --quiet
	cp $(BUILD)/golden/summary.json tests/golden/small.summary.json

# Fuzzing with clang's libFuzzer (fuzz/README.md): build-fuzz/fz_* over the
# library built with ASan, UBSan and coverage; `make fuzz` runs each target
# FUZZ_SECONDS (FUZZ_JOBS at a time; FUZZ_TARGETS to pick some).
FUZZ_SECONDS ?= 600
FUZZ_JOBS    ?= 1
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer

$(BUILD)/fz_%: fuzz/fz_%.c fuzz/fz.h $(LIB)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(LIB) $(LDLIBS)

fuzz-build: deps-fuzz
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OPT="-O1 -g" \
		SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" build-fuzz/libhybridspec.a \
		$(patsubst fuzz/%.c,build-fuzz/%,$(wildcard fuzz/fz_*.c))

fuzz: fuzz-build
	@sh fuzz/run.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

# Short simulations under valgrind (one with profiles and a bit trace): no
# invalid access, no leak.
VALGRIND = valgrind -q --error-exitcode=1 --leak-check=full
valgrind: deps
	@$(MAKE) --no-print-directory $(BIN)
	$(VALGRIND) $(BIN) run tests/data/small.json -o $(BUILD)/valgrind/small \
		--overwrite --quiet --trace
	$(VALGRIND) $(BIN) run configs/paper/multi_tenant.json \
		-o $(BUILD)/valgrind/multi_tenant --overwrite --quiet

clean:
	rm -rf build build-asan build-fuzz

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(EVEX_OBJ:.o=.d)
