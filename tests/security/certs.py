"""Test certificates made at test time with the openssl CLI, in a temporary
directory (no private key is ever committed): a CA, a server certificate for
localhost / 127.0.0.1, a client certificate, and a second ("rogue") CA with a
client certificate of its own."""

import os
import subprocess

OPENSSL_BIN = os.environ.get("OPENSSL_BIN", "openssl")


def _run(*args, cwd):
    subprocess.run([OPENSSL_BIN, *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def _key_and_csr(name, cn, cwd):
    _run("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}", cwd=cwd)
    os.chmod(os.path.join(cwd, f"{name}.key"), 0o600)


def _ca(name, cwd):
    _run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
         "-subj", f"/CN=fusiond test {name}", cwd=cwd)
    os.chmod(os.path.join(cwd, f"{name}.key"), 0o600)


def _sign(name, ca, extensions, cwd):
    with open(os.path.join(cwd, f"{name}.ext"), "w") as f:
        f.write(extensions)
    _run("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
         "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext",
         cwd=cwd)


def make_certificates(directory):
    """Writes the certificates into `directory`; returns {name: path}."""
    os.makedirs(directory, exist_ok=True)
    _ca("ca", directory)
    _ca("rogue-ca", directory)
    _key_and_csr("server", "localhost", directory)
    _sign("server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
          "extendedKeyUsage=serverAuth\n", directory)
    for name, ca in (("client", "ca"), ("rogue-client", "rogue-ca")):
        _key_and_csr(name, name, directory)
        _sign(name, ca, "extendedKeyUsage=clientAuth\n", directory)
    names = ["ca.pem", "server.pem", "server.key", "client.pem", "client.key",
             "rogue-client.pem", "rogue-client.key"]
    return {n: os.path.join(directory, n) for n in names}


def write_secret(path, text):
    """A secret file readable by its owner only."""
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(text)
    return path
