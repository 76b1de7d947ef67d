# Redeem. `make` builds, `make test` runs every test on both backends,
# `make bench` prints the benchmark table. Missing Debian packages are
# installed first (.ci/deps).

CC ?= cc
BUILD := build
PKGS := sqlite3 libmariadb libsodium jansson libcurl
WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Werror
CFLAGS_COMMON = -std=c11 -D_GNU_SOURCE -g $(WARN) \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
CFLAGS ?= -O2
# PLANTED_BUG=1 compiles in the fault suite's negative control, a lost
# update in the claim (app/core/redeem.c); only with a BUILD of its own.
ifeq ($(PLANTED_BUG),1)
CFLAGS_COMMON += -DREDEEM_PLANTED_BUG
endif
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined

LIB_SRC := $(wildcard app/lib/*.c app/db/*.c app/core/*.c)
# The worker's modules (all but its main) also go into the unit tests and
# the fuzz targets.
WEB_SRC := $(filter-out app/web/main.c,$(wildcard app/web/*.c))
# app/cli: redeemctl's files, and the sweeper's main on its own.
SWEEP_MAIN := app/cli/redeem-sweep.c
CLI_SRC := $(filter-out $(SWEEP_MAIN),$(wildcard app/cli/*.c))
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
UNIT_SRC := $(wildcard tests/unit/*.c)
BENCH_SRC := $(wildcard bench/*.c)
MIGRATIONS := $(wildcard migrations/sqlite/*.sql migrations/mysql/*.sql)

# Two flavours of every object: plain (build/obj) and sanitized
# (build/asan/obj, clang with ASan and UBSan).
OBJ := $(BUILD)/obj
AOBJ := $(BUILD)/asan/obj
lib_objs = $(patsubst %.c,$(1)/%.o,$(LIB_SRC)) $(1)/migrations.o
web_objs = $(patsubst %.c,$(1)/%.o,$(WEB_SRC))
WEB_LIBS = -lfcgi
# Fuzz targets: clang with libFuzzer, ASan and UBSan.
FOBJ := $(BUILD)/fuzz/obj
FSAN := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined

.PHONY: all build deps test test-quick unit race format format-check \
	bench run clean fuzz faults
all: build

deps:
	@./.ci/deps

build: deps
	@$(MAKE) --no-print-directory $(BUILD)/redeemctl $(BUILD)/redeem-fcgi \
		$(BUILD)/redeem-sweep

$(BUILD)/migrations.c: $(MIGRATIONS) app/db/embed-migrations.sh
	@mkdir -p $(@D)
	app/db/embed-migrations.sh migrations > $@.tmp && mv $@.tmp $@

$(OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) -MMD -MP -c $< -o $@
$(OBJ)/migrations.o: $(BUILD)/migrations.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) -Iapp/db -c $< -o $@

$(AOBJ)/%.o: %.c
	@mkdir -p $(@D)
	clang $(CFLAGS_COMMON) -O1 $(SAN) -MMD -MP -c $< -o $@
$(AOBJ)/migrations.o: $(BUILD)/migrations.c
	@mkdir -p $(@D)
	clang $(CFLAGS_COMMON) -O1 $(SAN) -Iapp/db -c $< -o $@

$(FOBJ)/%.o: %.c
	@mkdir -p $(@D)
	clang $(CFLAGS_COMMON) -O1 $(FSAN) -MMD -MP -c $< -o $@

$(BUILD)/libweb.a: $(call web_objs,$(OBJ))
	ar rcs $@ $^
$(BUILD)/asan/libweb.a: $(call web_objs,$(AOBJ))
	ar rcs $@ $^
$(BUILD)/fuzz/libfuzzweb.a: $(call web_objs,$(FOBJ)) \
		$(patsubst %.c,$(FOBJ)/%.o,$(wildcard app/lib/*.c))
	ar rcs $@ $^
.SECONDARY: $(patsubst tests/fuzz/%.c,$(FOBJ)/tests/fuzz/%.o,$(FUZZ_SRC))
$(BUILD)/fuzz/fuzz_%: $(FOBJ)/tests/fuzz/fuzz_%.o $(BUILD)/fuzz/libfuzzweb.a
	clang -fsanitize=fuzzer,address,undefined -o $@ $^ $(LIBS)

$(BUILD)/redeem-fcgi: $(OBJ)/app/web/main.o $(BUILD)/libweb.a \
		$(BUILD)/libredeem.a
	$(CC) -o $@ $^ $(LIBS) $(WEB_LIBS)
$(BUILD)/asan/redeem-fcgi: $(AOBJ)/app/web/main.o $(BUILD)/asan/libweb.a \
		$(BUILD)/asan/libredeem.a
	clang $(SAN) -o $@ $^ $(LIBS) $(WEB_LIBS)

$(BUILD)/libredeem.a: $(call lib_objs,$(OBJ))
	ar rcs $@ $^
$(BUILD)/asan/libredeem.a: $(call lib_objs,$(AOBJ))
	ar rcs $@ $^

$(BUILD)/redeemctl: $(patsubst %.c,$(OBJ)/%.o,$(CLI_SRC)) $(BUILD)/libredeem.a
	$(CC) -o $@ $^ $(LIBS)
$(BUILD)/asan/redeemctl: $(patsubst %.c,$(AOBJ)/%.o,$(CLI_SRC)) \
		$(BUILD)/asan/libredeem.a
	clang $(SAN) -o $@ $^ $(LIBS)

$(BUILD)/redeem-sweep: $(OBJ)/$(SWEEP_MAIN:.c=.o) $(BUILD)/libredeem.a
	$(CC) -o $@ $^ $(LIBS)
$(BUILD)/asan/redeem-sweep: $(AOBJ)/$(SWEEP_MAIN:.c=.o) \
		$(BUILD)/asan/libredeem.a
	clang $(SAN) -o $@ $^ $(LIBS)

$(BUILD)/unit-tests: $(patsubst %.c,$(OBJ)/%.o,$(UNIT_SRC)) \
		$(BUILD)/libweb.a $(BUILD)/libredeem.a
	$(CC) -o $@ $^ $(LIBS) $(WEB_LIBS) $(shell pkg-config --libs check)
$(BUILD)/asan/unit-tests: $(patsubst %.c,$(AOBJ)/%.o,$(UNIT_SRC)) \
		$(BUILD)/asan/libweb.a $(BUILD)/asan/libredeem.a
	clang $(SAN) -o $@ $^ $(LIBS) $(WEB_LIBS) $(shell pkg-config --libs check)

$(BUILD)/bench: $(patsubst %.c,$(OBJ)/%.o,$(BENCH_SRC)) $(BUILD)/libredeem.a
	$(CC) -o $@ $^ $(LIBS)

# Everything a test run needs, built once.
TEST_BINS := $(BUILD)/redeemctl $(BUILD)/unit-tests $(BUILD)/asan/unit-tests \
	$(BUILD)/asan/redeemctl $(BUILD)/redeem-fcgi $(BUILD)/asan/redeem-fcgi \
	$(BUILD)/redeem-sweep $(BUILD)/asan/redeem-sweep \
	$(FUZZ_BINS)

test:
	@./.ci/deps test
	@$(MAKE) --no-print-directory -j$$(nproc) $(TEST_BINS)
	@tests/run-all.sh

# One backend, no sanitizers: REDEEM_TEST_DB=sqlite (default) or a DSN.
unit: deps
	@$(MAKE) --no-print-directory $(BUILD)/unit-tests $(BUILD)/redeemctl
	$(BUILD)/unit-tests

# Each fuzz target for FUZZ_SECONDS (make test runs them for a few).
FUZZ_SECONDS ?= 120
fuzz: deps
	@$(MAKE) --no-print-directory $(FUZZ_BINS)
	@tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

# The fault-injection suite: FAULTS_SECONDS of load and faults on SQLite,
# then on MariaDB (two front ends), then the negative control, a short
# race on a PLANTED_BUG=1 build (in $(BUILD)/planted) that the checker
# must fail. FAULTS_SEED replays a run.
FAULTS_SECONDS ?= 600
faults: deps
	@$(MAKE) --no-print-directory $(BUILD)/redeemctl $(BUILD)/redeem-fcgi \
		$(BUILD)/redeem-sweep
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/planted PLANTED_BUG=1 \
		$(BUILD)/planted/redeemctl $(BUILD)/planted/redeem-fcgi \
		$(BUILD)/planted/redeem-sweep
	FAULTS_SECONDS=$(FAULTS_SECONDS) tests/faults/run.sh sqlite $(BUILD)
	FAULTS_SECONDS=$(FAULTS_SECONDS) tests/faults/run.sh mariadb $(BUILD)
	FAULTS_SECONDS=30 tests/faults/run.sh --expect-fail sqlite \
		$(BUILD)/planted

FORMAT_SRC = $(shell find app tests bench -name '*.[ch]' 2>/dev/null)
format:
	clang-format -i $(FORMAT_SRC)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRC) && \
		echo "format-check: $(words $(FORMAT_SRC)) files in KNF"

bench: deps
	@./.ci/deps bench
	@$(MAKE) --no-print-directory $(BUILD)/bench $(BUILD)/redeemctl \
		$(BUILD)/redeem-fcgi $(BUILD)/redeem-sweep
	@REDEEM_BIN=$(BUILD) bench/run.sh

# Serves on 127.0.0.1:$(REDEEM_PORT) (8080) with REDEEM_DB (default
# sqlite:var/redeem.db) in the foreground; Ctrl-C stops everything.
run: build
	@nginx/serve.sh

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
