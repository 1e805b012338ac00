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
    """Floods of the command anchors (each ~200 kB): time grows linearly, as in test_api."""
    import time

    for text in (
        "mysql -u " * 20_000,
        "machine a login b " * 12_000,
        "default login u " * 12_000,
        "sshpass -v " * 20_000,
        "htpasswd -b " * 20_000,
        "\\nmysql -uroot " * 14_000,
        # issue 42
        "keytool -storepass " * 10_000,
        "login -p x " * 18_000,
        "--password x " * 15_000,
        "sqlplus a/b " * 16_000,
        "vault kv put a=b " * 12_000,
        '{"command": "zip -P ' * 10_000,
    ):
        runs = {}
        for size, tries in ((len(text) // 10, 3), (len(text), 1)):  # the full run is long
            best = float("inf")
            for _ in range(tries):
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


# ----------------------------------------------------------------------------- issue 42
# Credentials a tool takes on its command line, read as a shell reads it (`shell.py`)
# and looked up in the table of tools (`tools.py`), or by the general rule.

PWQ = rnd(9) + "#" + rnd(4)  # needs quotes in no shell


def masked_only(det: Detector, text: str, secret: str, rule: str) -> str:
    """The secret is gone, under `rule`, and nothing else of the line changed."""
    out = masked(det, text, secret, rule)
    assert out == text.replace(secret, f"[redacted:{rule}]"), out
    return out


# The forms the issue lists as missed before, each with the rule that now names it.
# Where a `NAME=value` reading of the option finds the value too (`--passphrase X`,
# `-passin pass:X`, `--from-literal=DB_PASS=X`), its `generic-*` name is kept: a tool's
# rule names only what no rule before it found.
@pytest.mark.parametrize(
    ("template", "rule"),
    [
        ("keytool -list -keystore ks.jks -storepass {p}", "keystore-password"),
        ("keytool -genkeypair -keystore ks.jks -keypass {p} -alias a", "keystore-password"),
        ("sqlplus scott/{p}@orcl", "connect-string-password"),
        ("smbclient //fs01/share -U ana%{p}", "share-password"),
        ("docker login -u ana -p {p} registry.acme.io", "registry-password"),
        ("7z x backup.7z -p{p}", "archive-password"),
        ("zip -P {p} -r out.zip docs/", "archive-password"),
        ("unzip -P {p} out.zip", "archive-password"),
        ("rar a -hp{p} backup.rar docs/", "archive-password"),
        ("ldapsearch -x -D cn=admin,dc=acme,dc=com -w {p} -b dc=acme,dc=com", "share-password"),
        ("ldapmodify -x -D cn=admin,dc=acme,dc=com -w {p} -f x.ldif", "share-password"),
        ("lftp -u ana,{p} ftp.acme.io", "share-password"),
        ("rabbitmqctl add_user ana {p}", "add-user-password"),
        ("mosquitto_passwd -b /etc/mosquitto/passwd ana {p}", "add-user-password"),
        ("useradd -m -p {p} ana", "add-user-password"),
        ("htpasswd -bc .htpasswd ana {p}", "htpasswd-password"),
        ("openssl rsa -in enc.pem -passin pass:{p} -out key.pem", "generic-password"),
        ("az login -u ana -p {p}", "cloud-password"),
        ("podman login -u ana -p {p} quay.io", "registry-password"),
        ("helm registry login reg.acme.io -u ana -p {p}", "registry-password"),
        ("mongosh mongodb://db/app -u ana -p {p}", "db-password"),
        ("redis-cli -h cache -a {p} ping", "redis-cli-password"),
        ("mysqldump -u root -p{p} app > app.sql", "mysql-password"),
        ("sshpass -p {p} ssh u@h", "sshpass-password"),
        ("curl -u ana:{p} https://api.acme.io", "curl-auth-user"),
        ("cf login -a api.cf.io -u ana -p {p}", "cloud-password"),
        ("oc login https://api.x:6443 -u ana -p {p}", "cloud-password"),
        ("gh secret set DB_PASSWORD --body {p}", "registry-password"),
    ],
)
def test_issue_42_forms_are_masked(det: Detector, template: str, rule: str) -> None:
    masked_only(det, template.format(p=PWQ), PWQ, rule)


@pytest.mark.parametrize(
    ("template", "rule"),
    [
        # database clients and dumps
        ('sqlcmd -S db -U sa -P {p} -Q "SELECT 1"', "db-password"),
        ("cqlsh db -u cassandra -p {p}", "db-password"),
        ("cypher-shell -u neo4j -p {p}", "db-password"),
        ("clickhouse-client --password={p} --query 'SELECT 1'", "generic-password"),
        ("vsql -h db -U dbadmin -w {p}", "db-password"),
        ("etcdctl --user root:{p} get /config", "db-password"),
        ("mosquitto_pub -h broker -u ana -P {p} -t x -m hi", "db-password"),
        ("db2 connect to SAMPLE user ana using {p}", "db-password"),
        # archives, key stores, crypto
        ("unrar x -p{p} backup.rar", "archive-password"),
        ("bsdtar --passphrase {p} -xf secure.zip", "generic-password"),
        ("jarsigner -keystore ks.jks -storepass {p} app.jar release", "keystore-password"),
        ("apksigner sign --ks release.jks --ks-pass pass:{p} app.apk", "generic-password"),
        ("openssl pkcs12 -export -in c.crt -out c.p12 -passout pass:{p}", "generic-password"),
        ("openssl enc -aes-256-cbc -in f -out f.enc -k {p}", "keystore-password"),
        ("openssl passwd -6 -salt xyz {p}", "keystore-password"),
        ("gpg --batch --passphrase {p} -d f.gpg", "generic-password"),
        ("ssh-keygen -t ed25519 -f deploy_key -N {p}", "keystore-password"),
        ("security unlock-keychain -p {p} build.keychain", "keystore-password"),
        # registries and builds
        ("buildah login -u ana -p {p} reg.acme.io", "registry-password"),
        ("skopeo copy --creds ana:{p} docker://a/x docker://b/x", "generic-credential"),
        ("twine upload -u ana -p {p} dist/*", "registry-password"),
        ("poetry config http-basic.internal ana {p}", "registry-password"),
        ("dotnet nuget add source https://n/v3 -n x -u ana -p {p}", "registry-password"),
        ("nuget sources add -Name x -Source https://n -Password {p}", "registry-password"),
        # shares and remote access
        ("rpcclient -U ana%{p} fs01", "share-password"),
        ("smbmap -H fs01 -u ana -p {p}", "share-password"),
        ("mount -t cifs //fs/s /mnt -o username=ana,pass={p},vers=3.0", "generic-password"),
        ("curl --proxy-user ana:{p} -x http://proxy:3128 https://x.io", "share-password"),
        ("xfreerdp /u:ana /p:{p} /v:winhost", "share-password"),
        ("plink -ssh ana@h -pw {p} uptime", "share-password"),
        ("ipmitool -I lanplus -H bmc -U admin -P {p} power status", "share-password"),
        ("snmpwalk -v3 -u ana -l authNoPriv -a SHA -A {p} sw01", "share-password"),
        ("nmcli dev wifi connect HomeWifi password {p}", "share-password"),
        # clouds
        ("az keyvault secret set --vault-name kv --name db --value {p}", "cloud-password"),
        ("cf auth ana {p}", "cloud-password"),
        ("ibmcloud login -u ana -p {p}", "cloud-password"),
        ("aws ssm put-parameter --name /db --type SecureString --value {p}", "cloud-password"),
        ("pulumi config set --secret dbPassword {p}", "generic-password"),
        ("pulumi config set --secret db {p}", "cloud-password"),
        # Kubernetes and Vault
        ("kubectl create secret generic app --from-literal=DB_PASS={p}", "generic-password"),
        ("kubectl create secret generic app --from-literal=root={p}", "secret-literal"),
        ("vault kv put -mount=secret app/api key={p}", "secret-literal"),
        ("vault operator unseal {p}", "secret-literal"),
        ("helm install db ./pg --set auth.password={p},replicas=2", "generic-password"),
        # connect strings
        ("sqlplus -s ana/{p}@//db:1521/ORCL @report.sql", "connect-string-password"),
        ('sqlplus "sys/{p}@ORCL as sysdba"', "connect-string-password"),
        ("expdp system/{p}@ORCL directory=d dumpfile=x.dmp", "connect-string-password"),
        ("sqlldr userid=ana/{p}@ORCL control=load.ctl", "connect-string-password"),
        ("rman target sys/{p}@ORCL", "connect-string-password"),
        ("secretsdump.py corp/ana:{p}@10.0.0.5", "connect-string-password"),
        ("mysqlsh ana:{p}@db:3306 --sql", "connect-string-password"),
        # adding users
        ("rabbitmqctl change_password ana {p}", "add-user-password"),
        ("net user ana {p} /add", "add-user-password"),
        ("ejabberdctl register ana chat.acme.io {p}", "add-user-password"),
        ("mc admin user add myminio ana {p}", "add-user-password"),
        ("grafana-cli admin reset-admin-password {p}", "add-user-password"),
        ("samba-tool user add ana {p}", "add-user-password"),
        ("airflow users create -u ana -p {p} -r Admin", "add-user-password"),
        ('kadmin.local -q "addprinc -pw {p} ana"', "add-user-password"),
    ],
)
def test_tool_table_per_family(det: Detector, template: str, rule: str) -> None:
    text = template.format(p=PWQ)
    if rule.startswith("generic-"):  # the `NAME=value` span may hold `pass:` or the user
        masked(det, text, PWQ, rule)
    else:
        masked_only(det, text, PWQ, rule)


@pytest.mark.parametrize(
    ("text", "secret", "rule"),
    [
        # the general rule: an option whose name says so, on a tool no row lists
        ("mytool --db-pass Xk9vQ2mLp7Rt", "Xk9vQ2mLp7Rt", "generic-password"),
        ("deploy.sh -storepass Xk9vQ2mLp7Rt", "Xk9vQ2mLp7Rt", "generic-password"),
        ("cli -client-secret=Qw8sT5vB2nM9xZ4k", "Qw8sT5vB2nM9xZ4k", "generic-secret"),
        ("openstack --os-password YlCmIjghYRKnEg list", "YlCmIjghYRKnEg", "generic-password"),
        ("argocd login cd.acme.io --password Xk9vQ2mL", "Xk9vQ2mL", "generic-password"),
        ("openstack --os-password 'cOvYveFbMKOj.X' list", "cOvYveFbMKOj.X", "generic-password"),
        ("set -e; PGPASSWORD=p,%xSjwtxVMX pg_dump -h db app", "p,%xSjwtxVMX", "generic-password"),
        # `-p` after the `login` subcommand of a tool the table does not know
        ("regcli login -u ana -p Xk9vQ2mLp7Rt reg.acme.io", "Xk9vQ2mLp7Rt", "generic-password"),
        ("pkgctl login -p Xk9vQ2mLp7Rt", "Xk9vQ2mLp7Rt", "generic-password"),
    ],
)
def test_general_rule_for_unknown_tools(det: Detector, text: str, secret: str, rule: str) -> None:
    masked_only(det, text, secret, rule)


@pytest.mark.parametrize(
    "template",
    [
        "keytool -list -keystore ks.jks -storepass '{p}'",
        'keytool -list -keystore ks.jks -storepass "{p}"',
        "7z x backup.7z -p'{p}'",
        "smbclient //fs/s -U 'ana%{p}'",
        "sshpass -p'{p}' ssh u@h",
    ],
)
def test_only_the_value_is_masked_quotes_kept(det: Detector, template: str) -> None:
    pw = rnd(6) + " " + rnd(6)  # a blank inside: it needs its quotes
    text = template.format(p=pw)
    out, _ = det.redact(text)
    assert pw not in out and out.count("'") + out.count('"') == text.count("'") + text.count('"')


@pytest.mark.parametrize(
    "wrap",
    [
        '{{"command": {c}}}',
        "ssh deploy@h {c}",
        "kubectl exec -it db -- sh -c {c}",
        "RUN {c}",
    ],
)
def test_wrapped_and_escaped_command_lines(det: Detector, wrap: str) -> None:
    import json

    line = f"docker login -u ana -p {PWQ} reg.acme.io && keytool -list -storepass {PWQ}"
    quoted = json.dumps(line) if wrap.startswith("{") else "'" + line + "'"
    text = wrap.format(c=quoted if "{c}" in wrap and not wrap.startswith("RUN") else line)
    out, _ = det.redact(text)
    assert PWQ not in out, out


def test_sqlplus_password_is_no_email(det: Detector) -> None:
    """`user/pass@host` joins a password to a host: no fake e-mail, the host stays."""
    text = f"sqlplus scott/{PW}@orcl.db.acme.com"
    out, hits = det.redact(text)
    assert out == "sqlplus scott/[redacted:connect-string-password]@orcl.db.acme.com"
    assert [h.rule for h in hits] == ["connect-string-password"]
    # a real address next to a credential is still one
    assert "[redacted:email]" in det.redact(f"az login -u ana@acme-mail.com -p {PW}")[0]


@pytest.mark.parametrize(
    "text",
    [
        # the issue's seven
        "ssh -p 2222 deploy@10.0.4.17",
        "mysql -P 3306 -h db",
        "ps -p 4242",
        "git log -p",
        "mkdir -p build/out",
        "cp -p a.txt b.txt",
        "tar -xzpf release.tgz",
        # and their like
        "docker run -p 8080:80 nginx",
        "docker run -d --name mongo -p 27017:27017 mongo:7",
        "kubectl port-forward svc/db 5432:5432",
        "pytest -k password_test",
        "grep -r password .",
        'git commit -m "reset password flow"',
        "npm install passport",
        "ls -la ~/.ssh",
        "find . -name '*.key'",
        "openssl genrsa -out key.pem 2048",
        "openssl req -new -newkey rsa:2048 -nodes -keyout key.pem -out csr.pem",
        "mysql -P 3306 -h db",
        "psql -p 5432",
        "unzip -p a.zip",
        "ssh-keygen -t ed25519 -f key",
        "ssh-keygen -t ed25519 -f key -N ''",
        'claude -p "summarize the failing tests"',
        "gh auth login -p https -h github.com",
        "docker login -u ana --password-stdin ghcr.io",
        "docker login registry.acme.io",
        "keytool -list -keystore ks.jks -storepass:env KS_PASS",
        "apksigner sign --ks release.jks --ks-pass env:KS_PASS app.apk",
        "openssl rsa -in key.pem -passin env:KEY_PASS -out plain.pem",
        "sqlplus / as sysdba",
        "sqlplus scott@orcl",
        "smbclient -L //fs01 -U ana",
        "7z a -p archive.7z docs/",
        "rar a -p- backup.rar docs/",
        "lftp -u ana ftp.acme.io",
        "rabbitmqctl add_user ana",
        "net user ana /delete",
        "mount -t cifs //fs/s /mnt -o credentials=/root/.smbcred,uid=1000",
        "kubectl create secret generic app --from-literal=username=admin",
        "kubectl create configmap app --from-literal=LOG_LEVEL=debug",
        "helm install db bitnami/postgresql --set auth.existingSecret=db-secret",
        "vault kv put -mount=secret app ttl=30m",
        "aws ssm put-parameter --name /app/tier --value t3.micro --type String",
        "mvn -Dmaven.test.skip=true package",
        "gradle build -Pversion=1.2.3",
        "python -c 'print(list(zip(a, b)))'",
        "the mysql -p flag prompts; use `zip -P` only with care",
        "docker login -u USERNAME -p PASSWORD registry.example.com",
        "docker login -u $USER -p $PASS ghcr.io",
        "docker login -u user -p <token> ghcr.io",
        "sqlplus user/password@db",
        "mytool --password /run/secrets/db_password",
        "PGPASSWORD=$(cat ~/.pgpass) pg_dump app",
        'parser.add_argument("-u", "--password", help="the password to use")',
    ],
)
def test_look_alikes_come_back_byte_identical(det: Detector, text: str) -> None:
    kept(det, text)
    import json

    as_call = json.dumps({"command": text})
    kept(det, as_call)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ('CMD ["keytool", "-list", "-storepass", "{p}"]', "keystore-password"),
        (
            'subprocess.run(["docker", "login", "-u", "ana", "-p", "{p}", "reg.io"])',
            "registry-password",
        ),
        ('args: ["rabbitmqctl", "add_user", "ana", "{p}"]', "add-user-password"),
        ('["sh", "-c", "7z x -p{p} a.7z"]', "archive-password"),
    ],
)
def test_exec_form_lists(det: Detector, text: str, rule: str) -> None:
    masked_only(det, text.format(p=PWQ), PWQ, rule)
    kept(det, 'subprocess.run(["docker", "login", "-u", user, "-p", password, registry])')
