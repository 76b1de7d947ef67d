# Redeem. `make` builds, `make test` runs every test on both backends,
# `make bench` prints the benchmark table. Missing Debian packages are
# installed first (.ci/deps).

CC ?= cc
BUILD := build
PKGS := sqlite3 libmariadb libsodium jansson
WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Werror
CFLAGS_COMMON = -std=c11 -D_GNU_SOURCE -g $(WARN) \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
CFLAGS ?= -O2
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined

LIB_SRC := $(wildcard app/lib/*.c app/db/*.c app/core/*.c)
CLI_SRC := $(wildcard app/cli/*.c)
UNIT_SRC := $(wildcard tests/unit/*.c)
BENCH_SRC := $(wildcard bench/*.c)
MIGRATIONS := $(wildcard migrations/sqlite/*.sql migrations/mysql/*.sql)

# Two flavours of every object: plain (build/obj) and sanitized
# (build/asan/obj, clang with ASan and UBSan).
OBJ := $(BUILD)/obj
AOBJ := $(BUILD)/asan/obj
lib_objs = $(patsubst %.c,$(1)/%.o,$(LIB_SRC)) $(1)/migrations.o

.PHONY: all build deps test test-quick unit race format format-check \
	bench run clean fuzz
all: build

deps:
	@./.ci/deps

build: deps
	@$(MAKE) --no-print-directory $(BUILD)/redeemctl

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

$(BUILD)/libredeem.a: $(call lib_objs,$(OBJ))
	ar rcs $@ $^
$(BUILD)/asan/libredeem.a: $(call lib_objs,$(AOBJ))
	ar rcs $@ $^

$(BUILD)/redeemctl: $(patsubst %.c,$(OBJ)/%.o,$(CLI_SRC)) $(BUILD)/libredeem.a
	$(CC) -o $@ $^ $(LIBS)
$(BUILD)/asan/redeemctl: $(patsubst %.c,$(AOBJ)/%.o,$(CLI_SRC)) \
		$(BUILD)/asan/libredeem.a
	clang $(SAN) -o $@ $^ $(LIBS)

$(BUILD)/unit-tests: $(patsubst %.c,$(OBJ)/%.o,$(UNIT_SRC)) \
		$(BUILD)/libredeem.a
	$(CC) -o $@ $^ $(LIBS) $(shell pkg-config --libs check)
$(BUILD)/asan/unit-tests: $(patsubst %.c,$(AOBJ)/%.o,$(UNIT_SRC)) \
		$(BUILD)/asan/libredeem.a
	clang $(SAN) -o $@ $^ $(LIBS) $(shell pkg-config --libs check)

$(BUILD)/bench: $(patsubst %.c,$(OBJ)/%.o,$(BENCH_SRC)) $(BUILD)/libredeem.a
	$(CC) -o $@ $^ $(LIBS)

# Everything a test run needs, built once.
TEST_BINS := $(BUILD)/redeemctl $(BUILD)/unit-tests $(BUILD)/asan/unit-tests \
	$(BUILD)/asan/redeemctl

test: deps
	@$(MAKE) --no-print-directory $(TEST_BINS)
	@tests/run-all.sh

# One backend, no sanitizers: REDEEM_TEST_DB=sqlite (default) or a DSN.
unit: deps
	@$(MAKE) --no-print-directory $(BUILD)/unit-tests $(BUILD)/redeemctl
	$(BUILD)/unit-tests

FORMAT_SRC = $(shell find app tests bench -name '*.[ch]' 2>/dev/null)
format:
	clang-format -i $(FORMAT_SRC)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRC) && \
		echo "format-check: $(words $(FORMAT_SRC)) files in KNF"

bench: deps
	@./.ci/deps bench
	@$(MAKE) --no-print-directory $(BUILD)/bench $(BUILD)/redeemctl
	@bench/run.sh

run:
	@echo "make run (nginx, the FastCGI workers, the sweeper) arrives with" \
		"the web issue; use build/redeemctl meanwhile (see README.md)." >&2
	@exit 2

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
