"""Generated samples of the secret families of issue 33 (item 6), for bench/redact.py
and tests/detect/test_generated_families.py.

Each generator draws a random secret from a realistic alphabet (AWS secret access keys:
40 characters of `[A-Za-z0-9/+]`; passwords: letters and digits, often with symbols,
sometimes a word and a year) and writes it the way people do: different spellings,
spacing and quoting, inside a realistic command, config file or tool output. A sample
counts as masked when no copy of the secret is left in the redacted text.

    python bench/redact_families.py [--n 1000] [--seed 33]
"""

from __future__ import annotations

import argparse
import random
import string
import sys
from collections.abc import Callable

Sample = tuple[str, str]  # (text, secret)

ALNUM = string.ascii_letters + string.digits
AWS_ALPHABET = ALNUM + "/+"
# Symbols found in generated and typed passwords; no blank, quote or backslash, which
# would need their own escaping in each syntax below.
SYMBOLS = "!@#%^&*-_=+.,:?~"
SHELL_SAFE = ALNUM + "_@%+=:,./-"  # may stand unquoted in a shell word
# What a password may hold in each quoting: '…' and netrc take `$` literally, "…" would
# expand it (people who write "$x" mean a variable), unquoted words hold SHELL_SAFE only.
LITERAL = ALNUM + SYMBOLS + "$"
ALPHABET_IN = {"": SHELL_SAFE, "'": LITERAL, '"': ALNUM + SYMBOLS}
WORDS = [
    "summer",
    "winter",
    "tiger",
    "falcon",
    "orange",
    "silver",
    "rocket",
    "maple",
    "harbor",
    "cobalt",
    "meadow",
    "copper",
    "lantern",
    "violet",
    "granite",
    "thunder",
    "coral",
    "ember",
    "puzzle",
    "nebula",
]
HOSTS = [
    "api.github.com",
    "github.com",
    "gitlab.example.org",
    "bitbucket.org",
    "pypi.org",
    "upload.pypi.org",
    "nexus.acme.io",
    "ftp.example.net",
    "files.internal.lan",
    "registry.npmjs.org",
    "heroku.com",
    "api.heroku.com",
    "git.company.com",
    "10.0.4.17",
    "db-backup-01.corp",
    "artifacts.example.com",
]
USERS = [
    "root",
    "admin",
    "deploy",
    "ubuntu",
    "ec2-user",
    "ana",
    "bob.smith",
    "svc_backup",
    "ci-bot",
    "jenkins",
]


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def password(rng: random.Random, alphabet: str = LITERAL) -> str:
    """A password as people have them: random (password manager), or word + digits + symbol."""
    kind = rng.random()
    if kind < 0.45:
        return _rand(rng, ALNUM, rng.randint(10, 24))
    if kind < 0.8:
        body = _rand(rng, alphabet, rng.randint(10, 28))
        return body if any(c.isalnum() for c in body[:2]) else rng.choice(ALNUM) + body
    word = rng.choice(WORDS)
    word = word.capitalize() if rng.random() < 0.6 else word
    tail = str(rng.randint(10, 9999)) + (rng.choice("!#*.?") if rng.random() < 0.6 else "")
    return word + tail


def user(rng: random.Random) -> str:
    u = rng.choice(USERS)
    return u if rng.random() < 0.7 else u + str(rng.randint(1, 99))


def host(rng: random.Random) -> str:
    h = rng.choice(HOSTS)
    return h if rng.random() < 0.6 else f"{_rand(rng, string.ascii_lowercase, 5)}.{h}"


# ----------------------------------------------------------------------------- families


def aws_secret(rng: random.Random) -> Sample:
    """An AWS secret access key in each spelling users write it."""
    key = _rand(rng, AWS_ALPHABET, 40)
    key_id = "AKIA" + _rand(rng, string.ascii_uppercase + "234567", 16)
    sts_id = "ASIA" + _rand(rng, string.ascii_uppercase + "234567", 16)
    sp = rng.choice(["=", " = ", " =  ", "= "])
    q = rng.choice(["", '"', "'"])
    forms = [
        f"[default]\naws_access_key_id{sp}{key_id}\naws_secret_access_key{sp}{key}\n",
        f"[profile {user(rng)}]\nregion = eu-west-1\naws_secret_access_key{sp}{key}",
        f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={q}{key}{q}\nAWS_REGION=us-east-1",
        f"aws_secret_access_key: {q}{key}{q}",
        f"  aws:\n    access_key_id: {key_id}\n    secret_access_key: {q}{key}{q}\n",
        f'{{\n    "Credentials": {{\n        "AccessKeyId": "{sts_id}",\n'
        f'        "SecretAccessKey": "{key}",\n        "Expiration": "2025-06-01T12:00:00Z"\n'
        "    }\n}",
        f'{{"AccessKeyId":"{key_id}","SecretAccessKey":"{key}"}}',
        f'export AWS_SECRET_ACCESS_KEY="{key}"',
        f"export AWS_SECRET_ACCESS_KEY={key}",
        f"$ export AWS_SECRET_ACCESS_KEY='{key}' && aws s3 ls",
        f"some-tool sync --aws-access-key-id {key_id} --aws-secret-access-key {key} s3://b/",
        f"--aws-secret-access-key={key}",
        f"aws configure set aws_secret_access_key {key}",
        f"aws configure set aws_secret_access_key {key} --profile {user(rng)}",
        f"docker run -e AWS_ACCESS_KEY_ID={key_id} -e AWS_SECRET_ACCESS_KEY={key} img",
        f"const s3 = new S3Client({{ credentials: {{ accessKeyId: '{key_id}', "
        f"secretAccessKey: '{key}' }} }});",
        f"AWS_SECRET_ACCESS_KEY: {key}",
        f'"aws_secret_access_key": "{key}",',
        f"boto3.client('s3', aws_access_key_id='{key_id}', aws_secret_access_key='{key}')",
        f'os.environ["AWS_SECRET_ACCESS_KEY"] = "{key}"',
        f'provider "aws" {{\n  access_key = "{key_id}"\n  secret_key = "{key}"\n}}',
        f"aws.secretKey={key}",
        f"      - uses: aws-actions/configure-aws-credentials@v4\n        with:\n"
        f"          aws-secret-access-key: {key}",
        f'\tSecretAccessKey: "{key}",',
        f"secret_access_key = {q}{key}{q}",
    ]
    return _embed(rng, rng.choice(forms)), key


def netrc(rng: random.Random) -> Sample:
    """`.netrc` entries: one line, one token per line, `default`, inside commands."""
    pw = password(rng)
    h, u = host(rng), user(rng)
    sp = rng.choice([" ", "  ", "\t"])
    ind = rng.choice(["  ", "    ", "\t", ""])
    forms = [
        f"machine {h} login {u} password {pw}",
        f"machine{sp}{h}{sp}login{sp}{u}{sp}password{sp}{pw}\n",
        f"machine {h}\n{ind}login {u}\n{ind}password {pw}\n",
        f"machine {h}\n{ind}login {u}\n{ind}password {pw}\nmachine {host(rng)}\n"
        f"{ind}login {user(rng)}\n{ind}password {password(rng)}\n",
        f"machine {host(rng)} login {user(rng)} password {password(rng)}\n"
        f"machine {h} login {u} password {pw}\n",
        f"default login {u} password {pw}",
        f"machine {h} login {u} password {pw}\ndefault login anonymous password {password(rng)}",
        f"machine {h} password {pw} login {u}",
        f"machine {h} login {u} password {pw} port 443",
        f'echo "machine {h} login {u} password {pw}" >> ~/.netrc',
        f"$ cat ~/.netrc\nmachine {h}\n{ind}login {u}\n{ind}password {pw}",
        f"cat > ~/.netrc <<EOF\nmachine {h}\nlogin {u}\npassword {pw}\nEOF",
        f'{{"command": "printf \'machine {h}\\\\nlogin {u}\\\\npassword {pw}\\\\n\' > ~/.netrc"}}',
        f'{{"content": "machine {h}\\n  login {u}\\n  password {pw}\\n"}}',
    ]
    return _embed(rng, rng.choice(forms)), pw


_MYSQL_CMDS = ["mysql", "mysql", "mysql", "mysqldump", "mariadb", "mysqladmin", "mariadb-dump"]


def mysql(rng: random.Random) -> Sample:
    """`mysql -u root -pX` and its relatives, with realistic option orders and wrappers."""
    cmd = rng.choice(_MYSQL_CMDS)
    q = rng.choice(["", "", "'", '"'])
    pw = password(rng, ALPHABET_IN[q])
    u, h = user(rng), host(rng)
    opts = [
        rng.choice([f"-u {u}", f"-u{u}", f"--user={u}"]),
        rng.choice(["", f"-h {h}", f"-h{h}", f"--host={h}", f"-h {h} -P 3306"]),
    ]
    pw_opt = (
        f"-p{q}{pw}{q}"
        if rng.random() < 0.8
        else rng.choice([f"--password={q}{pw}{q}", f"-p{q}{pw}{q}"])
    )
    opts.insert(rng.randint(0, len(opts)), pw_opt)
    args = " ".join(o for o in opts if o)
    db = rng.choice(["app", "shop_prod", "wordpress", "mysql", ""])
    tail = {
        "mysql": rng.choice(
            [f" {db}", f" {db} < schema.sql", ' -e "SHOW DATABASES;"', f" {db} -e 'select 1'"]
        ),
        "mariadb": rng.choice([f" {db}", ' -e "SELECT VERSION()"']),
        "mysqldump": rng.choice(
            [f" {db} > backup.sql", f" --single-transaction {db} | gzip > db.sql.gz"]
        ),
        "mariadb-dump": " --all-databases > all.sql",
        "mysqladmin": rng.choice([" status", " ping", " create newdb"]),
    }[cmd]
    wrap = rng.choice(
        [
            "{}",
            "$ {}",
            "sudo {}",
            "COUNT=$({} | wc -l)",
            "while ! {}; do sleep 1; done",
            "docker exec -i db {}",
            "docker compose exec mysql {}",
            "kubectl exec -it deploy/mysql -- {}",
            "ssh {} ",
            "Run `{}` to check.",
            '{{"command": "{}"}}',
        ]
    )
    line = f"{cmd} {args}{tail}"
    if wrap.startswith('{"command"'):
        line = line.replace('"', '\\"')
    text = wrap.format(line) if not wrap.startswith("ssh") else f"ssh {u}@{h} '{line}'"
    return _embed(rng, text), pw


def sshpass(rng: random.Random) -> Sample:
    """`sshpass -p X ssh …`, `sshpass -pX scp …`, quoted, with other options first."""
    q = rng.choice(["", "", "'", '"'])
    pw = password(rng, ALPHABET_IN[q])
    u, h = user(rng), host(rng)
    flag = rng.choice([f"-p {q}{pw}{q}", f"-p{q}{pw}{q}"])
    pre = rng.choice(["", "", "-v ", "-P assword: "])
    cmd = rng.choice(
        [
            f"ssh {u}@{h}",
            f"ssh -o StrictHostKeyChecking=no {u}@{h} 'uptime'",
            f"ssh -p 2222 {u}@{h}",
            f"scp ./build.tar.gz {u}@{h}:/tmp/",
            f"rsync -avz -e ssh dist/ {u}@{h}:/var/www/",
        ]
    )
    wrap = rng.choice(["{}", "$ {}", "Then run: {}", "for h in a b; do {}; done", "{} && echo ok"])
    if rng.random() < 0.15:  # the password in the environment, `sshpass -e`
        qe = rng.choice(["'", ""])
        pw = password(rng, ALPHABET_IN[qe])
        return _embed(rng, f"export SSHPASS={qe}{pw}{qe}\n" + wrap.format(f"sshpass -e {cmd}")), pw
    return _embed(rng, wrap.format(f"sshpass {pre}{flag} {cmd}")), pw


def redis_cli(rng: random.Random) -> Sample:
    """`redis-cli -a X` / `--pass X`, with host and port options around it."""
    q = rng.choice(["", "", "'", '"'])
    pw = password(rng, ALPHABET_IN[q])
    h = host(rng)
    opts = [rng.choice(["", f"-h {h}"]), rng.choice(["", "-p 6379", "-p 6380"])]
    opts.insert(rng.randint(0, 2), rng.choice([f"-a {q}{pw}{q}", f"--pass {q}{pw}{q}"]))
    if rng.random() < 0.3:
        opts.append("--no-auth-warning")
    cmd = rng.choice(["ping", "INFO memory", "KEYS 'session:*'", "--scan --pattern 'x*'", ""])
    wrap = rng.choice(["{}", "$ {}", "docker exec -it cache {}", "kubectl exec redis-0 -- {}"])
    line = "redis-cli " + " ".join(o for o in opts if o) + (f" {cmd}" if cmd else "")
    return _embed(rng, wrap.format(line)), pw


def htpasswd(rng: random.Random) -> Sample:
    """`htpasswd -b[c] file user X`, `htpasswd -nbB user X`, `-bBC 10 …`."""
    q = rng.choice(["", "", "'", '"'])
    pw = password(rng, ALPHABET_IN[q])
    u = user(rng)
    f = rng.choice([".htpasswd", "/etc/nginx/.htpasswd", "/etc/apache2/.htpasswd", "auth/htpasswd"])
    line = rng.choice(
        [
            f"htpasswd -b {f} {u} {q}{pw}{q}",
            f"htpasswd -cb {f} {u} {q}{pw}{q}",
            f"htpasswd -bB {f} {u} {q}{pw}{q}",
            f"htpasswd -bBC 10 {f} {u} {q}{pw}{q}",
            f"htpasswd -nb {u} {q}{pw}{q}",
            f"htpasswd -nbB {u} {q}{pw}{q} > auth",
            f"sudo htpasswd -c -b {f} {u} {q}{pw}{q}",
        ]
    )
    wrap = rng.choice(["{}", "$ {}", "docker run --rm httpd:2.4 {}", "RUN {}"])
    return _embed(rng, wrap.format(line)), pw


def _embed(rng: random.Random, snippet: str) -> str:
    """Put the snippet in surrounding transcript-like text (or leave it alone)."""
    before = rng.choice(
        [
            "",
            "Here is my config:\n",
            "I ran this and it fails with access denied:\n\n",
            "```\n",
            "The deploy script does:\n    ",
            "ok, ",
            "Output:\n",
        ]
    )
    after = rng.choice(["", "\n", "\n```", "\nwhy does it not work?", " — then it hangs."])
    if before == "```\n" and not after.endswith("```"):
        after += "\n```"
    return before + snippet + after


FAMILIES: dict[str, Callable[[random.Random], Sample]] = {
    "aws-secret-access-key": aws_secret,
    "netrc": netrc,
    "mysql -p": mysql,
    "sshpass -p": sshpass,
    "redis-cli -a": redis_cli,
    "htpasswd -b": htpasswd,
}


def samples(family: str, n: int = 1000, seed: int = 33) -> list[Sample]:
    """`n` samples of one family; the same seed gives the same samples."""
    rng = random.Random(f"{seed}-{family}")
    return [FAMILIES[family](rng) for _ in range(n)]


def score(redact: Callable[[str], str], n: int = 1000, seed: int = 33) -> dict[str, dict]:
    """Per family: how many of `n` samples lose every copy of their secret, and misses."""
    out: dict[str, dict] = {}
    for fam in FAMILIES:
        missed = [(t, s) for t, s in samples(fam, n, seed) if s in redact(t)]
        out[fam] = {
            "samples": n,
            "masked": n - len(missed),
            "rate": round(1 - len(missed) / n, 4),
            "missed_examples": [t for t, _ in missed[:5]],
        }
    return out


def main() -> int:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "src"))
    from memloom.detect import Detector

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=33)
    args = ap.parse_args()
    det = Detector()
    for fam, row in score(lambda t: det.redact(t)[0], args.n, args.seed).items():
        print(f"{fam:24s} {row['masked']:5d}/{row['samples']}  {row['rate']:.1%}")
        for ex in row["missed_examples"]:
            print(f"    missed: {ex!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
