"""Generated samples of the secret families of issue 33 (item 6) and of the command-line
credentials of issue 42, for bench/redact.py and tests/detect/test_generated_families.py.

Each generator draws a random secret from a realistic alphabet (AWS secret access keys:
40 characters of `[A-Za-z0-9/+]`; passwords: letters and digits, often with symbols,
sometimes a word and a year) and writes it the way people do: different spellings,
spacing and quoting, inside a realistic command, config file or tool output. A sample
counts as masked when no copy of the secret is left in the redacted text.

Issue 42: `CLI_FORMS` writes a password the way each of 150 command forms of 112 tools
takes it (in nine families), in a random quoting, wrapped as people run it (`sudo`, a
Dockerfile `RUN`, a CI step, `ssh host '…'`, a JSON tool call, an exec-form list, lines
joined by `\\`);
`CLI_NEGATIVES` are look-alike commands with no credential (`ssh -p 2222`, `git log -p`,
`docker login` that prompts), which must come back unchanged.

    python bench/redact_families.py [--n 1000] [--seed 33] [--cli-n 200]
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import shlex
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


# ----------------------------------------------------------------------------- issue 42

# Credentials on command lines, by tool family. A template holds `{p}` (the password in
# its quotes), `{pw}` (bare, where the template quotes it), `{q}` (the quote), `{u}`,
# `{h}`, `{db}`; `bad` lists characters the form cannot hold unquoted or at all (a
# `user/pass@db` password holds no `@`, a `mount -o` list no `,`).
CliForm = tuple[str, str, str]  # (tool, template, characters the password must not hold)

CLI_FORMS: dict[str, list[CliForm]] = {
    "database clients and dumps": [
        ("mongosh", 'mongosh "mongodb://{h}:27017/app" -u {u} -p {p}', ""),
        ("mongodump", "mongodump --db shop -u {u} --password {p} --out /backup", ""),
        ("mongoexport", "mongoexport --username {u} --password={p} -d shop -c orders", ""),
        ("sqlcmd", 'sqlcmd -S {h} -U sa -P {p} -Q "SELECT 1"', ""),
        ("bcp", "bcp dbo.orders out orders.csv -S {h} -U sa -P {p} -c", ""),
        ("cqlsh", "cqlsh {h} -u cassandra -p {p}", ""),
        ("cypher-shell", "cypher-shell -a neo4j://{h}:7687 -u neo4j -p {p}", ""),
        ("clickhouse-client", 'clickhouse-client --host {h} --password {p} --query "SELECT 1"', ""),
        ("influx", "influx -host {h} -username admin -password {p} -execute 'SHOW DATABASES'", ""),
        ("vsql", "vsql -h {h} -U dbadmin -w {p}", ""),
        ("redis-cli", "redis-cli -h {h} -p 6379 -a {p} ping", ""),
        ("mysqldump", "mysqldump -u {u} -p{p} --single-transaction app > app.sql", ""),
        ("psql", 'psql "host={h} user={u} password={pw} dbname=app sslmode=require"', "'\" "),
        ("pg_dump", "PGPASSWORD={p} pg_dump -h {h} -U {u} app > app.sql", ""),
        ("etcdctl", "etcdctl --endpoints={h}:2379 --user root:{p} get /config", ""),
        ("mosquitto_pub", "mosquitto_pub -h {h} -u {u} -P {p} -t alerts -m hi", ""),
        ("hdbsql", 'hdbsql -n {h}:30015 -u SYSTEM -p {p} "SELECT 1 FROM DUMMY"', ""),
        ("couchbase-cli", "couchbase-cli bucket-list -c {h} -u Administrator -p {p}", ""),
        ("db2", "db2 connect to SAMPLE user {u} using {p}", ""),
    ],
    "archive tools": [
        ("7z", "7z a -p{p} -mhe=on backup.7z data/", ""),
        ("7z", "7z x -p{p} backup.7z -o/tmp/out", ""),
        ("7za", "7za x archive.zip -p{p}", ""),
        ("zip", "zip -P {p} -r secrets.zip config/", ""),
        ("zip", "zip --password {p} out.zip report.pdf", ""),
        ("unzip", "unzip -P {p} secrets.zip -d out/", ""),
        ("rar", "rar a -p{p} backup.rar docs/", ""),
        ("rar", "rar a -hp{p} backup.rar docs/", ""),
        ("unrar", "unrar x -p{p} backup.rar", ""),
        ("bsdtar", "bsdtar --passphrase {p} -xf secure.zip", ""),
        ("unar", "unar -p {p} archive.rar", ""),
        ("aescrypt", "aescrypt -e -p {p} notes.txt", ""),
        ("ccrypt", "ccrypt -e -K {p} notes.txt", ""),
    ],
    "key stores and crypto": [
        ("keytool", "keytool -list -keystore ks.jks -storepass {p}", ""),
        (
            "keytool",
            "keytool -genkeypair -alias app -keyalg RSA -keystore ks.jks -storepass {p}"
            " -keypass {p} -dname CN=app",
            "",
        ),
        (
            "keytool",
            "keytool -importkeystore -srckeystore in.p12 -srcstoretype PKCS12 -srcstorepass {p}"
            " -destkeystore out.jks -deststorepass {p}",
            "",
        ),
        ("jarsigner", "jarsigner -keystore ks.jks -storepass {p} app.jar release", ""),
        ("apksigner", "apksigner sign --ks release.jks --ks-pass pass:{p} app.apk", ""),
        ("openssl", "openssl pkcs12 -export -in c.crt -out c.p12 -passout pass:{p}", ""),
        ("openssl", "openssl rsa -in enc.pem -passin pass:{p} -out key.pem", ""),
        ("openssl", "openssl enc -aes-256-cbc -pbkdf2 -in f.txt -out f.enc -k {p}", ""),
        ("openssl", "openssl passwd -6 -salt xyz {p}", ""),
        ("gpg", "gpg --batch --pinentry-mode loopback --passphrase {p} -d f.gpg", ""),
        ("ssh-keygen", "ssh-keygen -t ed25519 -f deploy_key -N {p} -C deploy", ""),
        ("pk12util", "pk12util -i c.p12 -d sql:. -W {p}", ""),
        ("security", "security unlock-keychain -p {p} ~/Library/Keychains/build.keychain", ""),
        ("security", "security import cert.p12 -k build.keychain -P {p} -T /usr/bin/codesign", ""),
    ],
    "registries and package managers": [
        ("docker", "docker login -u {u} -p {p} {h}", ""),
        ("docker", "docker login {h} --username {u} --password {p}", ""),
        ("podman", "podman login -u {u} -p {p} quay.io", ""),
        ("helm", "helm registry login {h} -u {u} -p {p}", ""),
        ("helm", "helm repo add internal https://{h}/charts --username {u} --password {p}", ""),
        ("buildah", "buildah login -u {u} -p {p} {h}", ""),
        ("skopeo", "skopeo copy --src-creds {u}:{p} docker://{h}/app:1 docker://local/app:1", ""),
        ("oras", "oras login {h} -u {u} -p {p}", ""),
        ("twine", "twine upload -u {u} -p {p} dist/*", ""),
        ("poetry", "poetry publish -u {u} -p {p}", ""),
        ("poetry", "poetry config http-basic.internal {u} {p}", ""),
        ("composer", "composer config http-basic.{h} {u} {p}", ""),
        ("mvn", "mvn deploy -Drepo.username={u} -Drepo.password={p}", ""),
        ("mvn", "mvn -Dgpg.passphrase={p} clean deploy", ""),
        ("gradle", "./gradlew publish -PsigningPassword={p} -PossrhUsername={u}", ""),
        ("gradle", "gradle publish -Dorg.gradle.project.nexusPassword={p}", ""),
        (
            "dotnet",
            "dotnet nuget add source https://{h}/v3/index.json -n internal -u {u} -p {p}"
            " --store-password-in-clear-text",
            "",
        ),
        ("nuget", "nuget sources add -Name internal -Source https://{h}/nuget -Password {p}", ""),
        ("uv", "uv publish --username {u} --password {p}", ""),
        ("npm-cli-login", "npm-cli-login -u {u} -p {p} -e ci@acme.io", ""),
        ("gh", "gh secret set DB_PASSWORD --body {p}", ""),
    ],
    "directory and file-sharing clients": [
        ("smbclient", "smbclient //{h}/share -U {u}%{p} -c 'ls'", ""),
        ("rpcclient", "rpcclient -U {u}%{p} {h}", ""),
        ("smbmap", "smbmap -H {h} -u {u} -p {p}", ""),
        ("crackmapexec", "crackmapexec smb {h} -u {u} -p {p}", ""),
        ("evil-winrm", "evil-winrm -i {h} -u {u} -p {p}", ""),
        ("mount", "mount -t cifs //{h}/share /mnt/share -o username={u},password={p}", ","),
        ("mount.cifs", "mount.cifs //{h}/s /mnt -o user={u},pass={p},vers=3.0", ","),
        (
            "ldapsearch",
            'ldapsearch -x -H ldap://{h} -D "cn=admin,dc=acme,dc=com" -w {p} -b "dc=acme,dc=com"',
            "",
        ),
        ("ldapmodify", "ldapmodify -x -D cn=admin,dc=acme,dc=com -w {p} -f change.ldif", ""),
        ("ldapadd", "ldapadd -x -D cn=admin,dc=acme,dc=com -w {p} -f users.ldif", ""),
        ("lftp", "lftp -u {u},{p} sftp://{h}", ""),
        ("lftp", 'lftp -u {u},{p} -e "mirror -R dist /www; quit" {h}', ""),
        ("ncftpput", "ncftpput -u {u} -p {p} {h} /www index.html", ""),
        ("curl", "curl --proxy-user {u}:{p} -x http://proxy:3128 https://example.com", ""),
        ("curl", "curl -u {u}:{p} https://{h}/api/v1/status", ""),
        ("wget", "wget --user={u} --password={p} https://{h}/file.tar.gz", ""),
        ("wget", "wget --ftp-user={u} --ftp-password={p} ftp://{h}/pub/x.iso", ""),
        ("svn", "svn checkout https://{h}/svn/app --username {u} --password {p}", ""),
        ("xfreerdp", "xfreerdp /u:{u} /p:{p} /v:{h}", ""),
        ("rdesktop", "rdesktop -u {u} -p {p} {h}", ""),
        ("plink", "plink -ssh {u}@{h} -pw {p} uptime", ""),
        ("pscp", "pscp -pw {p} build.zip {u}@{h}:/tmp/", ""),
        ("ipmitool", "ipmitool -I lanplus -H {h} -U admin -P {p} power status", ""),
        ("snmpwalk", "snmpwalk -v3 -u {u} -l authPriv -a SHA -A {p} -x AES -X {p} {h}", ""),
        ("sshpass", "sshpass -p {p} ssh {u}@{h}", ""),
        ("rsync", "RSYNC_PASSWORD={p} rsync -av dist/ rsync://{u}@{h}/www", ""),
    ],
    "cloud CLIs": [
        ("az", "az login -u {u}@acme.com -p {p}", ""),
        ("az", "az login --service-principal -u {u} -p {p} --tenant acme.onmicrosoft.com", ""),
        ("az", "az acr login -n myreg -u {u} -p {p}", ""),
        ("az", "az keyvault secret set --vault-name kv --name db-password --value {p}", ""),
        ("oc", "oc login https://api.{h}:6443 -u {u} -p {p}", ""),
        ("cf", "cf login -a https://api.{h} -u {u} -p {p}", ""),
        ("cf", "cf auth {u} {p}", ""),
        ("ibmcloud", "ibmcloud login -u {u} -p {p} -r us-south", ""),
        ("aws", "aws ssm put-parameter --name /app/db --type SecureString --value {p}", ""),
        ("pulumi", "pulumi config set --secret dbPassword {p}", ""),
        ("terraform", "terraform apply -var {q}db_password={pw}{q}", " "),
        ("ansible-playbook", 'ansible-playbook x.yml -e "ansible_password={pw} env=prod"', "'\" "),
        ("gcloud", "gcloud sql users set-password postgres --instance db --password={p}", ""),
        ("argocd", "argocd login {h} --username admin --password {p}", ""),
        ("openstack", "openstack --os-username {u} --os-password {p} server list", ""),
    ],
    "Kubernetes and Vault literals": [
        ("kubectl", "kubectl create secret generic db --from-literal=password={p}", ""),
        (
            "kubectl",
            "kubectl create secret generic app --from-literal=username={u}"
            " --from-literal=api-key={p}",
            "",
        ),
        ("kubectl", "kubectl -n prod create secret generic app --from-literal=DB_PASS={p}", ""),
        (
            "kubectl",
            "kubectl create secret docker-registry regcred --docker-server={h}"
            " --docker-username={u} --docker-password={p}",
            "",
        ),
        ("oc", "oc create secret generic db --from-literal=password={p}", ""),
        ("vault", "vault kv put secret/app/db password={p}", ""),
        ("vault", "vault kv put secret/app username={u} password={p}", ""),
        ("vault", "vault kv put -mount=secret app/api key={p}", ""),
        ("vault", "vault write auth/userpass/users/{u} password={p} policies=admin", ""),
        ("vault", "vault login -method=userpass username={u} password={p}", ""),
        ("vault", "vault operator unseal {p}", ""),
        ("helm", "helm upgrade --install db ./pg --set auth.postgresPassword={p}", ","),
        ("helm", "helm install app ./chart --set-string secrets.apiToken={p}", ","),
    ],
    "user/pass@db connect strings": [
        ("sqlplus", "sqlplus {u}/{p}@{db}", "@/"),
        ("sqlplus", "sqlplus -s {u}/{p}@//{h}:1521/ORCL @report.sql", "@/"),
        ("sqlplus", 'sqlplus "sys/{pw}@{db} as sysdba"', "@/\"' "),
        ("expdp", "expdp {u}/{p}@{db} directory=DATA_PUMP_DIR dumpfile=app.dmp schemas=APP", "@/"),
        ("impdp", "impdp {u}/{p}@{db} directory=DATA_PUMP_DIR dumpfile=app.dmp", "@/"),
        ("sqlldr", "sqlldr userid={u}/{p}@{db} control=load.ctl", "@/"),
        ("rman", "rman target sys/{p}@{db}", "@/"),
        ("dgmgrl", 'dgmgrl sys/{p}@{db} "show configuration"', "@/"),
        ("secretsdump", "secretsdump.py corp.local/{u}:{p}@{h}", "/"),
        ("psexec", "psexec.py {u}:{p}@{h}", "/"),
        ("wmiexec", "impacket-wmiexec corp/{u}:{p}@{h}", "/"),
        ("mysqlsh", "mysqlsh {u}:{p}@{h}:3306 --sql", "/"),
    ],
    "add-user commands": [
        ("rabbitmqctl", "rabbitmqctl add_user {u} {p}", ""),
        ("rabbitmqctl", "rabbitmqctl change_password {u} {p}", ""),
        ("rabbitmqctl", "docker exec rabbitmq rabbitmqctl add_user {u} {p}", ""),
        ("mosquitto_passwd", "mosquitto_passwd -b /etc/mosquitto/passwd {u} {p}", ""),
        ("mosquitto_passwd", "mosquitto_passwd -c -b passwd {u} {p}", ""),
        ("htpasswd", "htpasswd -bc .htpasswd {u} {p}", ""),
        ("useradd", "useradd -m -s /bin/bash -p {p} {u}", ""),
        ("usermod", "usermod -p {p} {u}", ""),
        ("net", "net user {u} {p} /add", ""),
        ("ejabberdctl", "ejabberdctl register {u} {h} {p}", ""),
        ("prosodyctl", "prosodyctl register {u} {h} {p}", ""),
        ("mc", "mc admin user add myminio {u} {p}", ""),
        ("grafana-cli", "grafana-cli admin reset-admin-password {p}", ""),
        ("samba-tool", "samba-tool user add {u} {p}", ""),
        ("ipmitool", "ipmitool user set password 2 {p}", ""),
        ("airflow", "airflow users create -u {u} -p {p} -f Ana -l Lee -r Admin -e a@acme.io", ""),
        ("kadmin", 'kadmin.local -q "addprinc -pw {pw} {u}"', "'\"` $"),
    ],
}
_CLI_WRAPS = [
    "{}",
    "{}",
    "$ {}",
    "sudo {}",
    "Run `{}` to check.",
    "RUN {}",
    "      - run: {}",
    "set -e; {} && echo done",
    "JSON",
    "SSH",
    "EXEC",
    "CONTINUED",
]
_DATABASES = ["ORCL", "prod_db", "db.corp.example.com:1521/APP", "PDB1", "XEPDB1"]


def cli_credential(family: str, rng: random.Random) -> tuple[str, str, str]:
    """One command line of a family: (text, secret, tool)."""
    tool, template, bad = rng.choice(CLI_FORMS[family])
    q = "" if "{q}" in template or "{pw}" in template else rng.choice(["", "", "'", '"'])
    alphabet = "".join(c for c in ALPHABET_IN[q] if c not in bad)
    pw = ""
    while not pw or pw[0] == "-" or (pw[0] not in ALNUM and rng.random() < 0.5):
        pw = password(rng, alphabet)
        pw = "".join(c for c in pw if c not in bad)
    if "{q}" in template:
        q = rng.choice(["'", '"'])
    line = template.format(
        p=f"{q}{pw}{q}", pw=pw, q=q, u=user(rng), h=host(rng), db=rng.choice(_DATABASES)
    )
    wrap = rng.choice(_CLI_WRAPS)
    if wrap == "JSON":
        text = json.dumps({"command": line, "description": f"Run {tool}"})
    elif wrap == "SSH" and "'" not in line:
        text = f"ssh {user(rng)}@{host(rng)} '{line}'"
    elif wrap == "CONTINUED":  # `tool \` + line break + `  -p …`: one command, two lines
        text = line.replace(" -", " \\\n    -", 2)
    elif wrap == "EXEC":  # exec form: `CMD ["tool", "-p", "…"]`, `subprocess.run([…])`
        text = rng.choice(["CMD {}", "subprocess.run({}, check=True)", "args: {}"]).format(
            json.dumps(shlex.split(line))
        )
    else:
        text = (wrap if wrap not in ("JSON", "SSH") else "{}").format(line)
    return _embed(rng, text), pw, tool


# Command lines that look like the ones above and hold no credential: each must come
# back byte for byte (and so must each as a JSON tool call).
CLI_NEGATIVES = [
    # the seven: -p is a port, a pid, a patch, "parents", "preserve"
    "ssh -p 2222 deploy@10.0.4.17",
    "mysql -P 3306 -h db -u app",
    "ps -p 4242 -o pid,etime,cmd",
    "git log -p -- src/",
    "mkdir -p build/out/assets",
    "cp -p config.yml backup/config.yml",
    "tar -xzpf release.tgz -C /opt",
    # ports, pids, patches and prompts
    "docker run -d -p 8080:80 nginx",
    "docker run -d --name mongo -p 27017:27017 mongo:7",
    "docker run --name mysql -e MYSQL_ROOT_PASSWORD_FILE=/run/secrets/pw -p 3306:3306 mysql:8",
    "podman run -p 8080:8080 app",
    "nerdctl run -p 80:80 nginx",
    "kubectl port-forward svc/db 5432:5432",
    "kubectl logs -p api-7d9f",
    "psql -h db -p 5432 -U app -d app",
    "pg_dump -Fc -p 5433 app > app.dump",
    "mongosh --host db --port 27017",
    "redis-cli -p 6380 ping",
    "redis-cli -h cache -n 2 keys '*'",
    "mysqldump -P 3307 -h db app > app.sql",
    "mysql -u root -p app",
    "scp -P 2222 build.tgz u@h:/tmp/",
    "rsync -avzp src/ dst/",
    "rsync -e 'ssh -p 2222' dist/ deploy@h:/www/",
    "sshpass -f ~/.pw ssh -p 2222 u@h",
    "ssh -i key.pem -p 2222 u@h",
    "ssh -L 5432:localhost:5432 bastion",
    "patch -p1 < fix.diff",
    "git add -p",
    "git stash -p",
    "cp -rp src dst",
    "tar -cpf backup.tar data/",
    "strace -p 4242",
    "gdb -p 4242",
    "perf record -g -p 4242",
    "top -p 4242",
    "npx serve -p 8000",
    "http-server -p 8000",
    'claude -p "summarize the failing tests"',
    "python -m http.server -b 127.0.0.1 8000",
    "pytest -p no:cacheprovider -q",
    "mosquitto_sub -h broker -t 'sensors/#' -p 1883",
    "unzip -p a.zip file.txt",
    "zip -9 -r site.zip public/",
    "zip -e secrets.zip notes.txt",
    "unzip -l release.zip",
    "7z a -p archive.7z docs/",
    "7z x backup.7z -o/tmp/out",
    "7z l backup.7z",
    "rar a -p- backup.rar docs/",
    "unrar l backup.rar",
    # searches, commits, installs: secret words as text
    "pytest -k password_test -q",
    "grep -r password .",
    "grep -rn api_key src/",
    "rg -i token --type py",
    'git commit -m "reset password flow"',
    'git commit -m "rotate the token weekly"',
    "npm install passport passport-local",
    "pip install keyring python-dotenv",
    "ls -la ~/.ssh",
    "find . -name '*.key'",
    "chmod 600 ~/.ssh/id_ed25519",
    "cat ~/.docker/config.json",
    # key stores and crypto without a secret
    "openssl genrsa -out key.pem 2048",
    "openssl req -new -newkey rsa:2048 -nodes -keyout key.pem -out csr.pem",
    "openssl rand -hex 32",
    "openssl x509 -in cert.pem -noout -text",
    "openssl rsa -in key.pem -passin env:KEY_PASS -out plain.pem",
    "openssl pkcs12 -export -in c.crt -inkey k.pem -passout file:pw.txt -out c.p12",
    "openssl passwd -stdin",
    "ssh-keygen -t ed25519 -f key",
    "ssh-keygen -t ed25519 -f key -N ''",
    "ssh-keygen -y -f key",
    "ssh-add ~/.ssh/id_ed25519",
    "keytool -list -keystore ks.jks",
    "keytool -genkeypair -alias app -keyalg RSA -keysize 2048 -keystore ks.jks",
    "keytool -list -keystore ks.jks -storepass:env KS_PASS",
    "keytool -printcert -file c.crt",
    "jarsigner -verify app.jar",
    "apksigner sign --ks release.jks app.apk",
    "apksigner sign --ks release.jks --ks-pass env:KS_PASS app.apk",
    "gpg --list-keys",
    "gpg --decrypt --passphrase-file pw.txt f.gpg",
    "security find-generic-password -s deploy -w",
    "security unlock-keychain ~/Library/Keychains/login.keychain-db",
    # logins that prompt or read stdin
    "docker login registry.acme.io",
    "docker login -u ana --password-stdin registry.acme.io",
    'echo "$PW" | docker login -u ana --password-stdin ghcr.io',
    'docker login -u ana --password-stdin ghcr.io <<< "$GHCR_TOKEN"',
    "podman login --get-login quay.io",
    "helm registry login registry.acme.io --username ana",
    "helm repo add bitnami https://charts.bitnami.com/bitnami",
    "helm install db bitnami/postgresql --set auth.existingSecret=db-secret",
    "gh auth login --with-token < token.txt",
    "gh auth login -p https -h github.com",
    "gh auth status",
    "gh secret set DB_PASSWORD < pw.txt",
    "gh secret list",
    "npm login --registry https://npm.acme.io",
    "az login",
    "az login --use-device-code",
    "az login --identity",
    "az account show",
    "az acr login -n myreg",
    "oc login https://api.cluster:6443 --web",
    "cf login -a https://api.cf.example.com --sso",
    "ibmcloud login --sso",
    "vault login",
    "vault login -method=oidc",
    "vault operator unseal",
    "cargo login",
    "twine upload dist/*",
    "aws configure list",
    "aws ssm get-parameter --name /app/db --with-decryption",
    "aws ssm put-parameter --name /app/tier --value t3.micro --type String",
    "gcloud auth login",
    # secrets by reference, files and prompts
    "sqlplus / as sysdba",
    "sqlplus -s /nolog @setup.sql",
    "sqlplus scott@orcl",
    "rman target /",
    "sqlldr control=load.ctl log=load.log",
    "smbclient -L //fs01 -U ana",
    "smbclient -N -L //fs01",
    "mount -t nfs nas:/export /mnt -o rw,hard",
    "mount -t cifs //fs/s /mnt -o credentials=/root/.smbcred,uid=1000",
    "ldapsearch -x -H ldap://ldap.acme.io -b dc=acme,dc=com",
    "ldapsearch -x -W -D cn=admin,dc=acme,dc=com -b dc=acme,dc=com",
    "ldapsearch -x -y /etc/ldap.secret -D cn=admin,dc=acme,dc=com",
    "lftp -u ana ftp.acme.com",
    "curl -u ana https://api.acme.io",
    'curl -X POST -H "Content-Type: application/json" -d \'{"a":1}\' https://api.acme.io',
    "wget --user=ana https://files.acme.io/x.tgz",
    "svn checkout --username ana https://svn.acme.io/app",
    "kubectl create secret generic db --from-file=./password.txt",
    "kubectl create secret tls web --cert=tls.crt --key=tls.key",
    "kubectl create secret generic app --from-literal=username=admin",
    "kubectl create configmap app --from-literal=LOG_LEVEL=debug",
    "kubectl get secret db -o jsonpath='{.data.password}'",
    "kubectl exec -it api-7d9f -- sh",
    "vault kv get secret/db",
    "vault kv put secret/app @data.json",
    "vault kv put -mount=secret app ttl=30m",
    "vault write auth/approle/role/app policies=app token_ttl=1h",
    "terraform apply -var-file=prod.tfvars",
    "terraform plan -var 'region=eu-west-1'",
    "ansible-playbook site.yml --ask-vault-pass",
    "ansible-playbook site.yml -e 'env=prod'",
    "pulumi config set aws:region us-east-1",
    "mvn -Dmaven.test.skip=true package",
    "mvn -Pprod deploy",
    "./gradlew test -Dorg.gradle.jvmargs=-Xmx2g",
    "gradle build -Pversion=1.2.3",
    "java -Djava.security.egd=file:/dev/urandom -jar app.jar",
    "poetry config virtualenvs.in-project true",
    "useradd -m -s /bin/bash ana",
    "usermod -aG docker ana",
    "adduser --disabled-password ana",
    "rabbitmqctl list_users",
    "rabbitmqctl add_user ana",
    "mosquitto_passwd -c passwd ana",
    "htpasswd -c .htpasswd ana",
    "net user ana /delete",
    "net user",
    "wpa_passphrase HomeWifi",
    "nmcli dev wifi list",
    "ipmitool -I lanplus -H 10.0.0.5 -U admin sensor list",
    "snmpwalk -v2c -c public 10.0.0.1",
    "xfreerdp /u:ana /v:winhost",
    "rdesktop -u ana winhost",
    "plink -ssh -P 2222 u@h",
    "grafana-cli plugins install grafana-clock-panel",
    "samba-tool user list",
    "airflow users list",
    "mc admin user list myminio",
    "isql -v mydsn",
    "db2 connect to sample",
    "cqlsh -u cassandra",
    "clickhouse-client --port 9000",
    'sqlcmd -S db -E -Q "select 1"',
    "mysqlsh root@localhost --sql",
    "secretsdump.py -h",
    "psexec \\\\winhost cmd.exe",
    "crackmapexec smb 10.0.0.0/24",
    "evil-winrm -i 10.0.0.5 -u admin -H <hash>",
]


def cli_samples(family: str, n: int = 200, seed: int = 42) -> list[tuple[str, str, str]]:
    """`n` command lines of one issue-42 family: (text, secret, tool)."""
    rng = random.Random(f"{seed}-cli-{family}")
    return [cli_credential(family, rng) for _ in range(n)]


def cli_negatives() -> list[str]:
    """The look-alikes, each on its own and as a JSON tool call."""
    return CLI_NEGATIVES + [json.dumps({"command": c}) for c in CLI_NEGATIVES]


def score_cli(redact: Callable[[str], str], n: int = 200, seed: int = 42) -> dict:
    """Per issue-42 family: samples whose secret is gone, by tool; look-alikes changed."""
    out: dict[str, dict] = {}
    for fam in CLI_FORMS:
        cases = cli_samples(fam, n, seed)
        missed = [(t, s, tool) for t, s, tool in cases if s in redact(t)]
        out[fam] = {
            "samples": n,
            "tools": len({tool for _, _, tool in cases}),
            "masked": n - len(missed),
            "rate": round(1 - len(missed) / n, 4),
            "missed_by_tool": dict(collections.Counter(tool for _, _, tool in missed)),
            "missed_examples": [t for t, _, _ in missed[:5]],
        }
    negatives = cli_negatives()
    changed = [x for x in negatives if redact(x) != x]
    out["look-alikes (must not change)"] = {
        "samples": len(negatives),
        "unchanged": len(negatives) - len(changed),
        "rate": round(1 - len(changed) / len(negatives), 4),
        "changed_examples": changed[:10],
    }
    return out


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
    ap.add_argument("--cli-n", type=int, default=200, help="issue-42 samples per family")
    args = ap.parse_args()
    det = Detector()
    for fam, row in score(lambda t: det.redact(t)[0], args.n, args.seed).items():
        print(f"{fam:24s} {row['masked']:5d}/{row['samples']}  {row['rate']:.1%}")
        for ex in row["missed_examples"]:
            print(f"    missed: {ex!r}")
    for fam, row in score_cli(lambda t: det.redact(t)[0], args.cli_n).items():
        done = row.get("masked", row.get("unchanged"))
        print(f"{fam:36s} {done:5d}/{row['samples']}  {row['rate']:.1%}")
        for ex in row.get("missed_examples", []) + row.get("changed_examples", []):
            print(f"    {'missed' if 'masked' in row else 'changed'}: {ex!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
