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
ARCH ?= $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
SWIFT ?= $(shell command -v swift || echo /opt/swift/usr/bin/swift)
ifeq ($(STATIC),1)
SCRATCH := .build-static
SWIFTFLAGS := --static-swift-stdlib --scratch-path $(SCRATCH)
else
SCRATCH := .build
SWIFTFLAGS :=
endif
BIN := $(SCRATCH)/$(BUILD)
UNITDIR := /lib/systemd/system
SYSUSERSDIR := /usr/lib/sysusers.d

.PHONY: all build install deb clean-deb

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
	install -m 0644 config/example.yaml config/sim-store.yaml README.md LICENSE docs/*.md $(DESTDIR)$(PREFIX)/share/doc/beacond/
	test -e $(DESTDIR)/etc/beacond/beacond.yaml || install -m 0640 packaging/beacond.yaml $(DESTDIR)/etc/beacond/beacond.yaml

deb: clean-deb
	$(MAKE) install DESTDIR=$(CURDIR)/dist/root PREFIX=/usr BUILD=$(BUILD) STATIC=$(STATIC) NOBUILD=$(NOBUILD)
	install -d dist/root/DEBIAN
	sed -e 's/@VERSION@/$(VERSION)/' -e 's/@ARCH@/$(ARCH)/' packaging/debian/control > dist/root/DEBIAN/control
	install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm dist/root/DEBIAN/
	echo /etc/beacond/beacond.yaml > dist/root/DEBIAN/conffiles
	dpkg-deb --root-owner-group --build dist/root dist/beacond_$(VERSION)_$(ARCH).deb

clean-deb:
	rm -rf dist/root dist/*.deb
