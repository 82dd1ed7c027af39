"""keyring's own backend tests (BackendBasicTests) on its two Secret Service backends.

Each backend runs on the default collection and on the session collection. Each class names the
suite it is in results.txt.
"""

from keyring.backends import SecretService, libsecret
from keyring.testing.backend import BackendBasicTests


class TestSecretServiceDefault(BackendBasicTests):
    suite = "keyring-SecretService-default"

    def init_keyring(self):
        return SecretService.Keyring()


class TestSecretServiceSession(BackendBasicTests):
    suite = "keyring-SecretService-session"

    def init_keyring(self):
        keyring = SecretService.Keyring()
        keyring.preferred_collection = "/org/freedesktop/secrets/aliases/session"
        return keyring


class TestLibsecretDefault(BackendBasicTests):
    suite = "keyring-libsecret-default"

    def init_keyring(self):
        return libsecret.Keyring()


class TestLibsecretSession(BackendBasicTests):
    suite = "keyring-libsecret-session"

    def init_keyring(self):
        keyring = libsecret.Keyring()
        # libsecret's SECRET_COLLECTION_SESSION: the alias "session".
        keyring.collection = libsecret.Secret.COLLECTION_SESSION
        return keyring
