# Installing coffer, its manual pages and shell completions, and building the library's
# documentation. Included by the Makefile, which provides the `release` target:
#
#     include mk/install.mk
#
#   make install [PREFIX=/usr/local] [DESTDIR=]   the release binary (and its links
#                                                 git-credential-coffer and docker-credential-coffer),
#                                                 man pages, completions, the D-Bus activation
#                                                 file and systemd user unit of `coffer secret-service`
#   make uninstall                                removes exactly what install put there
#   make install-pass-shim                        also installs coffer as `pass`
#   make uninstall-pass-shim                      removes only the `pass` shim
#   make docs                                     DocC site of the Coffer module in docs-site/

PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
DOCC ?= $(shell command -v docc 2>/dev/null || xcrun --find docc 2>/dev/null || echo docc)

BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR ?= $(PREFIX)/share/zsh/vendor-completions
FISH_COMPLETION_DIR ?= $(PREFIX)/share/fish/vendor_completions.d
DBUS_SERVICES_DIR ?= $(PREFIX)/share/dbus-1/services
SYSTEMD_USER_UNIT_DIR ?= $(PREFIX)/lib/systemd/user

DOCS_OUTPUT ?= docs-site
DOCS_SCRATCH ?= .build/docc
DOCS_HOSTING_BASE_PATH ?=

# What install writes, relative to $(DESTDIR).
INSTALLED_FILES = \
	$(BINDIR)/coffer \
	$(BINDIR)/git-credential-coffer \
	$(BINDIR)/docker-credential-coffer \
	$(MANDIR)/man1/coffer.1 \
	$(MANDIR)/man5/coffer-store.5 \
	$(BASH_COMPLETION_DIR)/coffer \
	$(ZSH_COMPLETION_DIR)/_coffer \
	$(FISH_COMPLETION_DIR)/coffer.fish \
	$(DBUS_SERVICES_DIR)/org.freedesktop.secrets.service \
	$(SYSTEMD_USER_UNIT_DIR)/coffer-secret-service.service

# What install-pass-shim writes, relative to $(DESTDIR): links to the files above, and for zsh a
# two-line _pass that hands over to _coffer (zsh binds a completion by the file's #compdef line).
PASS_SHIM_LINKS = \
	$(BINDIR)/pass:coffer \
	$(BASH_COMPLETION_DIR)/pass:coffer \
	$(FISH_COMPLETION_DIR)/pass.fish:coffer.fish
PASS_SHIM_ZSH = $(ZSH_COMPLETION_DIR)/_pass
PASS_SHIM_ZSH_MARKER = \# Written by coffer's install-pass-shim

.PHONY: install uninstall install-pass-shim uninstall-pass-shim docs

install: release
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(MANDIR)/man5" \
		"$(DESTDIR)$(BASH_COMPLETION_DIR)" "$(DESTDIR)$(ZSH_COMPLETION_DIR)" "$(DESTDIR)$(FISH_COMPLETION_DIR)" \
		"$(DESTDIR)$(DBUS_SERVICES_DIR)" "$(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/coffer" "$(DESTDIR)$(BINDIR)/coffer"
	ln -sf coffer "$(DESTDIR)$(BINDIR)/git-credential-coffer"
	ln -sf coffer "$(DESTDIR)$(BINDIR)/docker-credential-coffer"
	install -m 0644 man/coffer.1 "$(DESTDIR)$(MANDIR)/man1/coffer.1"
	install -m 0644 man/coffer-store.5 "$(DESTDIR)$(MANDIR)/man5/coffer-store.5"
	install -m 0644 completions/coffer.bash "$(DESTDIR)$(BASH_COMPLETION_DIR)/coffer"
	install -m 0644 completions/_coffer "$(DESTDIR)$(ZSH_COMPLETION_DIR)/_coffer"
	install -m 0644 completions/coffer.fish "$(DESTDIR)$(FISH_COMPLETION_DIR)/coffer.fish"
	sed 's|@BINDIR@|$(BINDIR)|g' data/org.freedesktop.secrets.service.in \
		> "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.secrets.service"
	chmod 0644 "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.secrets.service"
	sed 's|@BINDIR@|$(BINDIR)|g' data/coffer-secret-service.service.in \
		> "$(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/coffer-secret-service.service"
	chmod 0644 "$(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/coffer-secret-service.service"

# Removes the files of install, and the pass shim when it is there (only what is coffer's).
uninstall: uninstall-pass-shim
	rm -f $(foreach file,$(INSTALLED_FILES),"$(DESTDIR)$(file)")

# `pass` runs coffer, and the shells complete `pass` as coffer. Refuses to replace a `pass`
# that is not coffer's (Debian's /usr/bin/pass, say) unless FORCE=1.
install-pass-shim: install
	@for pair in $(PASS_SHIM_LINKS); do \
		link="$(DESTDIR)$${pair%%:*}"; target="$${pair#*:}"; \
		if [ -e "$$link" -o -L "$$link" ] && [ "$$(readlink "$$link")" != "$$target" ] && [ "$(FORCE)" != 1 ]; then \
			echo "install-pass-shim: $$link exists and is not coffer's; remove it or run with FORCE=1" >&2; \
			exit 1; \
		fi; \
	done
	@if [ -e "$(DESTDIR)$(PASS_SHIM_ZSH)" ] && ! grep -q "^$(PASS_SHIM_ZSH_MARKER)" "$(DESTDIR)$(PASS_SHIM_ZSH)" \
		&& [ "$(FORCE)" != 1 ]; then \
		echo "install-pass-shim: $(DESTDIR)$(PASS_SHIM_ZSH) exists and is not coffer's; remove it or run with FORCE=1" >&2; \
		exit 1; \
	fi
	@for pair in $(PASS_SHIM_LINKS); do \
		link="$(DESTDIR)$${pair%%:*}"; target="$${pair#*:}"; \
		echo "ln -s $$target $$link"; \
		rm -f "$$link" && ln -s "$$target" "$$link" || exit 1; \
	done
	printf '#compdef pass\n%s: pass is coffer here.\n_coffer "$$@"\n' "$(PASS_SHIM_ZSH_MARKER)" \
		> "$(DESTDIR)$(PASS_SHIM_ZSH)"
	chmod 0644 "$(DESTDIR)$(PASS_SHIM_ZSH)"

# Removes the shim's links and zsh file, and only those that are coffer's.
uninstall-pass-shim:
	@for pair in $(PASS_SHIM_LINKS); do \
		link="$(DESTDIR)$${pair%%:*}"; target="$${pair#*:}"; \
		if [ -L "$$link" ] && [ "$$(readlink "$$link")" = "$$target" ]; then \
			echo "rm -f $$link"; rm -f "$$link" || exit 1; \
		fi; \
	done
	@if [ -f "$(DESTDIR)$(PASS_SHIM_ZSH)" ] && grep -q "^$(PASS_SHIM_ZSH_MARKER)" "$(DESTDIR)$(PASS_SHIM_ZSH)"; then \
		echo "rm -f $(DESTDIR)$(PASS_SHIM_ZSH)"; rm -f "$(DESTDIR)$(PASS_SHIM_ZSH)"; \
	fi

# The DocC site of the Coffer module, built with the toolchain's docc (no plugin): symbol graphs
# from a build in its own scratch folder, then `docc convert`, failing on any warning. The graphs
# are kept between runs: a build with nothing to do does not write them again.
docs: bootstrap
	rm -rf "$(DOCS_OUTPUT)"
	@# No graph yet, or it was deleted: start the scratch folder afresh so that the module is compiled.
	@if [ ! -f "$(DOCS_SCRATCH)/symbol-graphs/Coffer.symbols.json" ]; then rm -rf "$(DOCS_SCRATCH)"; fi
	mkdir -p "$(DOCS_SCRATCH)/symbol-graphs"
	$(SWIFT) build --scratch-path "$(DOCS_SCRATCH)" --target Coffer \
		-Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir \
		-Xswiftc "$(abspath $(DOCS_SCRATCH))/symbol-graphs"
	"$(DOCC)" convert Sources/Coffer/Coffer.docc \
		--additional-symbol-graph-dir "$(DOCS_SCRATCH)/symbol-graphs" \
		--output-path "$(DOCS_OUTPUT)" \
		--fallback-display-name Coffer \
		--fallback-bundle-identifier org.coffer.Coffer \
		--transform-for-static-hosting \
		$(if $(DOCS_HOSTING_BASE_PATH),--hosting-base-path "$(DOCS_HOSTING_BASE_PATH)" )--warnings-as-errors
	@echo "docs: open $(DOCS_OUTPUT)/index.html through a web server, or publish $(DOCS_OUTPUT)/"
