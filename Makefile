# beacond: build, install and package.
#   make                      release build of beacond and beaconctl
#   make install              into $(DESTDIR)$(PREFIX) (PREFIX=/usr by default)
#   make deb                  dist/beacond_$(VERSION)_$(ARCH).deb with dpkg-deb
# The binaries link the Swift runtime statically (STATIC=1, a build of its own in
# .build-static), so a gateway needs no Swift toolchain. BUILD=debug STATIC=0 NOBUILD=1
# packages the debug build already there (the tests use it: SwiftPM's lock on .build is held
# by `swift test`, so they must not build).
PREFIX ?= /usr
DESTDIR ?=
BUILD ?= release
STATIC ?= 1
VERSION ?= 0.1.0
# The package's Maintainer field: a distributor sets their own.
MAINTAINER ?= beacond developers <beacond@users.noreply.github.com>
ARCH ?= $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
SWIFT ?= $(shell command -v swift || echo /opt/swift/usr/bin/swift)
# Hardening: position-independent (Swift's default) with full RELRO (-z relro -z now), as
# Debian's hardening flags give C programs. Linked by lld (the toolchain's) with its
# relocations packed (DT_RELR, glibc 2.36, Debian 12): a position-independent start reads
# 8 KB of them instead of gold's 1 MB, which stayed in the daemon's memory (BENCHMARKS.md,
# "Idle memory").
HARDENING := -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now \
	-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs
# The functions start-up and an idle minute run, laid out together (scripts/order-file says
# why and how the list is made; a name no longer in the build is passed over).
ORDER := -Xlinker --symbol-ordering-file=$(CURDIR)/packaging/beacond.order -Xlinker --no-warn-symbol-ordering
ifeq ($(STATIC),1)
SCRATCH := .build-static
SWIFTFLAGS := --static-swift-stdlib --scratch-path $(SCRATCH) $(HARDENING) $(ORDER)
else
SCRATCH := .build
SWIFTFLAGS := $(HARDENING)
endif
BIN := $(SCRATCH)/$(BUILD)
# Man pages are written from the binaries' own command definitions (scripts/man-page runs
# them with --experimental-dump-help); a cross build gives a host build of the same source.
MANBIN ?= $(BIN)
UNITDIR := /lib/systemd/system
SYSUSERSDIR := /usr/lib/sysusers.d

.PHONY: all build install deb lint-deb clean-deb

all: build

build:
	$(SWIFT) build -c $(BUILD) $(SWIFTFLAGS) --product beacond
	$(SWIFT) build -c $(BUILD) $(SWIFTFLAGS) --product beaconctl

# Binaries, the unit, the sysusers entry, the example configuration (as the default
# /etc/beacond/beacond.yaml only if none exists) and the docs.
ifeq ($(NOBUILD),1)
install:
else
install: build
endif
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)/etc/beacond $(DESTDIR)$(PREFIX)/share/doc/beacond
	install -m 0755 $(BIN)/beacond $(BIN)/beaconctl $(DESTDIR)$(PREFIX)/bin/
	test "$(BUILD)" = debug || strip $(DESTDIR)$(PREFIX)/bin/beacond $(DESTDIR)$(PREFIX)/bin/beaconctl
	sed 's|/usr/bin/beacond|$(PREFIX)/bin/beacond|g' systemd/beacond.service > $(DESTDIR)$(UNITDIR)/beacond.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/beacond.service
	install -m 0644 systemd/beacond.sysusers $(DESTDIR)$(SYSUSERSDIR)/beacond.conf
	install -m 0644 config/example.yaml config/sim-store.yaml README.md CHANGELOG.md LICENSE docs/*.md docs/openapi.json \
		$(DESTDIR)$(PREFIX)/share/doc/beacond/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	for tool in beacond beaconctl; do \
		env -u BEACOND_SOCKET python3 scripts/man-page $(MANBIN)/$$tool > $(DESTDIR)$(PREFIX)/share/man/man1/$$tool.1 \
			&& gzip -9nf $(DESTDIR)$(PREFIX)/share/man/man1/$$tool.1 || exit 1; \
	done
	test -e $(DESTDIR)/etc/beacond/beacond.yaml || install -m 0640 packaging/beacond.yaml $(DESTDIR)/etc/beacond/beacond.yaml

deb: clean-deb
	$(MAKE) install DESTDIR=$(CURDIR)/dist/root PREFIX=/usr BUILD=$(BUILD) STATIC=$(STATIC) NOBUILD=$(NOBUILD)
	install -d dist/root/DEBIAN dist/root/usr/share/lintian/overrides
	# Debian policy: the copyright file, the changelog (gzip -9n: reproducible), lintian's
	# overrides with their reasons, md5sums, and the installed size.
	install -m 0644 packaging/debian/copyright dist/root/usr/share/doc/beacond/copyright
	gzip -9n < packaging/debian/changelog > dist/root/usr/share/doc/beacond/changelog.gz
	install -m 0644 packaging/debian/lintian-overrides dist/root/usr/share/lintian/overrides/beacond
	cd dist/root && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum > DEBIAN/md5sums
	sed -e 's/@VERSION@/$(VERSION)/' -e 's/@ARCH@/$(ARCH)/' -e 's/@MAINTAINER@/$(MAINTAINER)/' \
		-e "s/@SIZE@/$$(du -sk --exclude=DEBIAN dist/root | cut -f1)/" packaging/debian/control > dist/root/DEBIAN/control
	install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm dist/root/DEBIAN/
	echo /etc/beacond/beacond.yaml > dist/root/DEBIAN/conffiles
	chmod 0644 dist/root/DEBIAN/control dist/root/DEBIAN/md5sums dist/root/DEBIAN/conffiles
	dpkg-deb --root-owner-group --build dist/root dist/beacond_$(VERSION)_$(ARCH).deb

# Debian policy as lintian checks it (the overrides in packaging/debian/lintian-overrides
# say why each is there). Any error or warning fails.
lint-deb: deb
	lintian --fail-on error,warning --tag-display-limit 0 dist/beacond_$(VERSION)_$(ARCH).deb

clean-deb:
	rm -rf dist/root dist/*.deb
