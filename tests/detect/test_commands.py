"""Passwords given in a tool's own syntax (issue 33, item 6): netrc entries, `mysql -pX`,
`sshpass -p X`, `redis-cli -a X`, `htpasswd -b … X`, and the assignment-layer gaps
beside them (AWS secret keys holding `/`, `aws configure set`, `SSHPASS=`).

Every positive passed through the detector unchanged before this change; every
negative is a near miss that must stay unchanged. Secrets are built at run time
(seeded), so this file holds no literal credential.
"""

from __future__ import annotations

import random
import string

import pytest

from memloom.detect import Detector

pytestmark = pytest.mark.security

ALNUM = string.ascii_letters + string.digits


def rnd(n: int, alphabet: str = ALNUM, seed: str = "33") -> str:
    r = random.Random(f"{seed}-{n}-{alphabet}")
    return "".join(r.choice(alphabet) for _ in range(n))


PW = rnd(14) + "!" + rnd(3, string.digits)  # a typed password
PW_SYM = rnd(6) + "%$" + rnd(6) + ".+" + rnd(2)  # symbols a shell word may hold in quotes
# An AWS secret access key holding `/` but no `+`: read as a relative path before.
AWS_SLASH = rnd(12) + "/" + rnd(15) + "/" + rnd(11)
AWS_LEAD = "/" + rnd(39)  # starting with `/`: read as an absolute path before


def masked(det: Detector, text: str, secret: str, rule: str) -> str:
    out, _ = det.redact(text)
    assert secret not in out, (text, out)
    assert f"[redacted:{rule}]" in out, out
    assert det.classify(text)[0] == 3
    return out


def kept(det: Detector, text: str) -> None:
    assert det.redact(text) == (text, []), det.redact(text)


# ----------------------------------------------------------------------------- AWS


@pytest.mark.parametrize("key", [AWS_SLASH, AWS_LEAD])
@pytest.mark.parametrize(
    "template",
    [
        "aws_secret_access_key = {k}",
        "[default]\naws_access_key_id = AKIA{id}\naws_secret_access_key={k}\n",
        "AWS_SECRET_ACCESS_KEY={k}",
        "aws_secret_access_key: {k}",
        '{{"AccessKeyId": "ASIA{id}", "SecretAccessKey": "{k}"}}',
        'export AWS_SECRET_ACCESS_KEY="{k}"',
        "export AWS_SECRET_ACCESS_KEY={k}",
        "sync --aws-secret-access-key {k} s3://bucket/",
        "--aws-secret-access-key={k}",
        "aws configure set aws_secret_access_key {k}",
        "aws configure set --profile dev aws_secret_access_key {k}",
        "credentials: {{ accessKeyId: 'AKIA{id}', secretAccessKey: '{k}' }}",
        "aws.secretKey={k}",
    ],
)
def test_aws_secret_keys_with_a_slash_are_masked(det: Detector, template: str, key: str) -> None:
    text = template.format(k=key, id=rnd(16, string.ascii_uppercase + "234567"))
    out = masked(det, text, key, "generic-secret")
    assert "secret" in out.lower() or "Secret" in out  # the name stays readable


def test_aws_key_that_reads_like_words_is_masked_under_its_name(det: Detector) -> None:
    """40 random characters can read as word pieces (`Aacj`, `UIe`, …); under an AWS
    secret key's own name the exact key shape decides."""
    key = "xsAacjWbOfvUIeWTVHAMNReVQCAPaEkI31LzMUi/"
    masked(det, f"export AWS_SECRET_ACCESS_KEY='{key}'", key, "generic-secret")


@pytest.mark.parametrize(
    "text",
    [
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # the docs' key
        "aws_secret_access_key = YOUR_SECRET_ACCESS_KEY_GOES_HERE_0123456",
        'AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY}"',
        "aws_secret_access_key = xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "secret_key = src/Components/Header/Index2024/Main",  # a path, still
        "token_path: projects/MyApp/releases/v2024/Build17/output",
        "aws configure set region eu-west-1",
        "aws configure set aws_secret_access_key",
        "git config --global user.name Ana",
    ],
)
def test_aws_and_config_near_misses(det: Detector, text: str) -> None:
    kept(det, text)


# ----------------------------------------------------------------------------- netrc


@pytest.mark.parametrize(
    "template",
    [
        "machine api.github.com login octo password {p}",
        "machine\tapi.github.com\tlogin\tocto\tpassword\t{p}",
        "machine api.github.com\n  login octo\n  password {p}\n",
        "machine a.example.org login u password {q}\nmachine b.example.org login v password {p}",
        "default login anonymous password {p}",
        "machine git.corp password {p} login deploy",
        "machine 10.0.4.17 login root password {p} port 21",
        'echo "machine h.example.com login u password {p}" >> ~/.netrc',
        "printf 'machine h.example.com\\nlogin u\\npassword {p}\\n' > ~/.netrc",
        '{{"command": "cat > ~/.netrc <<EOF\\nmachine h.com\\n  login u\\n  password {p}\\nEOF"}}',
        '{{"command": "printf \'machine h.com\\\\nlogin u\\\\npassword {p}\\\\n\' > ~/.netrc"}}',
    ],
)
def test_netrc_passwords_are_masked(det: Detector, template: str) -> None:
    text = template.format(p=PW, q=rnd(12))
    out = masked(det, text, PW, "netrc-password")
    assert "password [redacted:netrc-password]" in out or "password\t[redacted" in out
    assert out.count("\n") == text.count("\n")


def test_netrc_password_starting_with_dollar_is_literal(det: Detector) -> None:
    """A netrc file expands nothing: `$x9…` is the password; `$GITHUB_TOKEN` is a template."""
    pw = "$" + rnd(15)
    masked(det, f"machine h.example.com login u password {pw}", pw, "netrc-password")
    kept(det, 'echo "machine github.com login x password $GITHUB_TOKEN" >> ~/.netrc')


@pytest.mark.parametrize(
    "text",
    [
        "the machine learning login password prompts are confusing",
        "by default login password prompts appear twice",
        "by default password prompts come first",  # no login: not a netrc entry
        "default password $ADMIN_PW",
        "machine <host> login <user> password <token>",
        "machine github.com login USERNAME password TOKEN",
        "machine github.com login me password ${GH_TOKEN}",
        "machine github.com login me password YOUR_TOKEN_HERE",
        "the build machine is 10 times faster, log in with your password",
        "default: password",
        "machine github.com login me",
    ],
)
def test_netrc_near_misses(det: Detector, text: str) -> None:
    kept(det, text)


# ----------------------------------------------------------------------------- mysql


@pytest.mark.parametrize(
    ("template", "secret"),
    [
        ("mysql -u root -p{p} app", PW),
        ("mysql -uroot -p{p}", PW),
        ("mysql -h 10.0.0.5 -P 3306 -u root -p'{s}' -e 'select 1'", PW_SYM),
        ('mysqldump -u backup -p"{p}" --single-transaction shop > shop.sql', PW),
        ("mariadb -p{p} -e 'SELECT VERSION()'", PW),
        ("mariadb-dump -uroot -p{p} --all-databases", PW),
        ("mysqladmin -u root -p{p} status", PW),
        ("docker exec -i db mysql -uroot -p{p} app < schema.sql", PW),
        ("COUNT=$(mysql -u app -p{p} -N -e 'select 1' | wc -l)", PW),
        ('{{"command": "mysql -uroot -p\\"{p}\\" app"}}', PW),
        ('{{"command": "set -e\\nmysql -uroot -p{p} app"}}', PW),
        ("mysql --user=app --password={p} app", PW),
        ("mysql -u root -p'$" + rnd(11) + "' app", "$" + rnd(11)),  # literal in '…'
    ],
)
def test_mysql_passwords_are_masked(det: Detector, template: str, secret: str) -> None:
    text = template.format(p=PW, s=PW_SYM)
    out = masked(det, text, secret, "mysql-password")
    assert (
        "-p[redacted" in out
        or "-p'[redacted" in out
        or "password=[redacted" in out
        or ('-p\\"[redacted' in out or '-p"[redacted' in out)
    )


@pytest.mark.parametrize(
    "text",
    [
        "mysql -u root -p app",  # `-p` alone prompts; `app` is the database
        "mysql -u root -p",
        "mysql -h db -P 3306 -u root",
        'mysql -uroot -p"$MYSQL_ROOT_PASSWORD" app',
        "mysql -uroot -p${DB_PASS} app",
        "mysql -uroot -p$MYSQL_PWD app",
        "mysql -u root -pPASSWORD",
        "mysql -u root -p<password> app",
        "mysql -u root -pyour_password app",
        "mysql_config --libs",
        "pip install mysqlclient -pfoo",
        "the mysql -p flag prompts for the password",
        "mysql -u root -e 'select * from t where a = -pi'",
    ],
)
def test_mysql_near_misses(det: Detector, text: str) -> None:
    kept(det, text)


# ----------------------------------------------------------------------------- sshpass


@pytest.mark.parametrize(
    ("template", "secret"),
    [
        ("sshpass -p {p} ssh deploy@10.0.4.17", PW),
        ("sshpass -p{p} scp build.tgz u@h:/tmp/", PW),
        ("sshpass -p '{s}' ssh -o StrictHostKeyChecking=no u@h 'uptime'", PW_SYM),
        ('sshpass -p"{p}" rsync -avz -e ssh dist/ u@h:/var/www/', PW),
        ("sshpass -v -p {p} ssh u@h", PW),
        ("sshpass -P assword: -p {p} ssh u@h", PW),
        ("export SSHPASS={p}\nsshpass -e ssh u@h", PW),
        ("export SSHPASS=bObMLRebRS\nsshpass -e ssh u@h", "bObMLRebRS"),  # reads as words
        ("export SSHPASS=75Ir/MQQg6,x\nsshpass -e ssh u@h", "75Ir/MQQg6,x"),  # `/` and `,`
    ],
)
def test_sshpass_passwords_are_masked(det: Detector, template: str, secret: str) -> None:
    text = template.format(p=PW, s=PW_SYM)
    rule = "generic-password" if "SSHPASS=" in text else "sshpass-password"
    masked(det, text, secret, rule)


@pytest.mark.parametrize(
    "text",
    [
        "sshpass -f ~/.pw ssh -p 2222 u@h",  # the `-p` belongs to ssh
        "sshpass -e ssh u@h",
        "sshpass -p $PASS ssh u@h",
        'sshpass -p "$SSH_PASSWORD" ssh u@h',
        "sshpass -p <password> ssh u@h",
        "sshpass ssh -p 2222 u@h",
        "export SSHPASS=$(cat ~/.pw)",
        "install sshpass with apt",
    ],
)
def test_sshpass_near_misses(det: Detector, text: str) -> None:
    kept(det, text)


# ----------------------------------------------------------------------------- redis-cli, htpasswd


@pytest.mark.parametrize(
    ("template", "rule"),
    [
        ("redis-cli -h 10.1.1.1 -p 6379 -a {p} ping", "redis-cli-password"),
        ("redis-cli --pass '{p}' --no-auth-warning INFO", "redis-cli-password"),
        ("redis-cli -a -{p} KEYS 'x*'", "redis-cli-password"),  # even when it starts with -
        ("htpasswd -b .htpasswd admin {p}", "htpasswd-password"),
        ("htpasswd -cb /etc/nginx/.htpasswd admin '{p}'", "htpasswd-password"),
        ("htpasswd -bBC 10 /etc/nginx/.htpasswd admin {p}", "htpasswd-password"),
        ("htpasswd -nbB admin {p} > auth", "htpasswd-password"),
        ("sudo htpasswd -c -b auth/htpasswd ana {p}", "htpasswd-password"),
    ],
)
def test_redis_cli_and_htpasswd(det: Detector, template: str, rule: str) -> None:
    masked(det, template.format(p=PW), PW, rule)


@pytest.mark.parametrize(
    "text",
    [
        "redis-cli -h 10.1.1.1 -p 6379 ping",
        "redis-cli --askpass -h cache",
        "redis-cli -a $REDIS_PASSWORD ping",
        "htpasswd -c .htpasswd admin",  # prompts
        "htpasswd -B /etc/nginx/.htpasswd admin",
        "htpasswd -nbB admin $ADMIN_PW",
        "htpasswd -b .htpasswd admin",  # too few arguments
    ],
)
def test_redis_cli_and_htpasswd_near_misses(det: Detector, text: str) -> None:
    kept(det, text)


def test_tool_password_variables(det: Detector) -> None:
    """`PGPASSWORD`, `MYSQL_PWD`, `REDISCLI_AUTH`: the tool reads the name as its password."""
    for name in ("PGPASSWORD", "MYSQL_PWD", "REDISCLI_AUTH", "RSYNC_PASSWORD"):
        masked(det, f"{name}=Copper5727 tool --x", "Copper5727", "generic-password")
    kept(det, "PGPASSWORD=$(cat ~/.pgpass) psql")
    kept(det, "REDISCLI_AUTH=${REDIS_PW} redis-cli ping")


def test_command_anchors_stay_linear(det: Detector) -> None:
    """Floods of the new anchors (each ~200 kB): time grows linearly, as in test_api."""
    import time

    for text in (
        "mysql -u " * 20_000,
        "machine a login b " * 12_000,
        "default login u " * 12_000,
        "sshpass -v " * 20_000,
        "htpasswd -b " * 20_000,
        "\\nmysql -uroot " * 14_000,
    ):
        runs = {}
        for size in (len(text) // 10, len(text)):
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                det.redact(text[:size])
                best = min(best, time.perf_counter() - t0)
            runs[size] = best
        small, full = runs.values()
        assert full < 1.5 or full / max(small, 1e-4) < 30, (text[:12], small, full)


def test_unquoted_value_longer_than_the_first_read_is_masked_whole(det: Detector) -> None:
    """An AWS session token (~700 characters of base64) unquoted: the part after the
    first 512 characters the assignment pattern reads used to stay in the text."""
    token = rnd(700, ALNUM + "/+")
    out = masked(det, f"aws_session_token = {token}\nnext line", token[-40:], "generic-token")
    assert out == "aws_session_token = [redacted:generic-token]\nnext line"
