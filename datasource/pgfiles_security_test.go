package datasource_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/coachd/coachd/datasource"
)

// pemPair writes a self-signed certificate for 127.0.0.1 and its key as
// PEM files in dir and returns their paths and the TLS certificate.
func pemPair(t *testing.T, dir, name string) (certFile, keyFile string, cert tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Unix(0, 0),
		NotAfter:              time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

// tlsPG is a Postgres server that speaks TLS, asks every client for a
// certificate and refuses every login. Each connection reports on
// conns whether the client presented a certificate.
func tlsPG(t *testing.T, cert tls.Certificate) (addr string, conns chan bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns = make(chan bool, 16)
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				msg, err := pgproto3.NewBackend(conn, conn).ReceiveStartupMessage()
				if _, ok := msg.(*pgproto3.SSLRequest); !ok || err != nil {
					conns <- false
					return
				}
				conn.Write([]byte("S"))
				tc := tls.Server(conn, cfg)
				if tc.Handshake() != nil {
					return
				}
				conns <- len(tc.ConnectionState().PeerCertificates) > 0
				be := pgproto3.NewBackend(tc, tc)
				msg, err = be.ReceiveStartupMessage()
				sm, ok := msg.(*pgproto3.StartupMessage)
				if err != nil || !ok {
					return
				}
				be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28000", Message: "no login here for " + sm.Parameters["application_name"]})
				be.Flush()
			}()
		}
	}()
	return ln.Addr().String(), conns
}

// TestSecurityDSNNoHostFiles: pgx reads files named by a DSN (sslkey,
// sslcert, sslrootcert, passfile, servicefile, service) and, when the DSN
// names none, coachd's own client certificate (~/.postgresql,
// PGSSLCERT/PGSSLKEY). A pack from a shared repo could so present
// coachd's certificate to a host it names, or log in with it to coachd's
// own database. A pack's DSN now names no file on coachd's host (a CA
// is `system` or a file inside the pack) and no client certificate is
// sent for it.
func TestSecurityDSNNoHostFiles(t *testing.T) {
	outside := t.TempDir() // coachd's host: not the pack
	ownCert, ownKey, _ := pemPair(t, outside, "coachd-client")
	_, _, srvCert := pemPair(t, outside, "server")
	addr, conns := tlsPG(t, srvCert)

	load := func(t *testing.T, dsn string, files map[string]string) error {
		t.Helper()
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "data"), 0o755)
		for name, body := range files {
			os.WriteFile(filepath.Join(dir, "data", name), []byte(body), 0o644)
		}
		yaml := "dsn: ${APP_DB}\ntables:\n  t: {scope: user_id, columns: [id]}\n"
		os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte(yaml), 0o644)
		_, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return dsn }, nil)
		if err == nil {
			t.Fatal("Load passed against a server refusing every login")
		}
		return err
	}
	certSent := func(t *testing.T) {
		t.Helper()
		for {
			select {
			case sent := <-conns:
				if sent {
					t.Error("the pack's host received coachd's client certificate")
				}
				continue
			default:
			}
			return
		}
	}
	base := "postgres://app@" + addr + "/app?sslmode=require"

	t.Run("ErrFileKeys", func(t *testing.T) {
		svc := filepath.Join(outside, "pg_service.conf")
		os.WriteFile(svc, []byte("[own]\nhost=127.0.0.1\n"), 0o600)
		pass := filepath.Join(outside, "pgpass")
		os.WriteFile(pass, []byte("*:*:*:*:own-password\n"), 0o600)
		for key, q := range map[string]string{
			"sslcert":     "&sslcert=" + ownCert + "&sslkey=" + ownKey,
			"sslkey":      "&sslkey=" + ownKey,
			"sslpassword": "&sslpassword=x",
			"passfile":    "&passfile=" + pass,
			"servicefile": "&servicefile=" + svc,
			"service":     "&service=own",
			"sslrootcert": "&sslrootcert=" + ownCert,
			"sslcertmode": "&sslcertmode=require",
		} {
			err := load(t, base+q, nil)
			if !strings.Contains(err.Error(), "data/app.yaml:1: dsn: "+key+" ") {
				t.Errorf("%s: %v", key, err)
			}
			certSent(t)
		}
	})
	t.Run("ErrRootCertLeadsOut", func(t *testing.T) {
		err := load(t, base+"&sslrootcert=../../ca.crt", nil)
		if !strings.Contains(err.Error(), "dsn: sslrootcert ") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("NoOwnClientCert", func(t *testing.T) {
		home := t.TempDir()
		os.MkdirAll(filepath.Join(home, ".postgresql"), 0o700)
		b, _ := os.ReadFile(ownCert)
		os.WriteFile(filepath.Join(home, ".postgresql", "postgresql.crt"), b, 0o600)
		b, _ = os.ReadFile(ownKey)
		os.WriteFile(filepath.Join(home, ".postgresql", "postgresql.key"), b, 0o600)
		t.Setenv("HOME", home)
		load(t, base, nil)
		certSent(t)
		t.Setenv("PGSSLCERT", ownCert)
		t.Setenv("PGSSLKEY", ownKey)
		load(t, base, nil)
		certSent(t)
	})
	t.Run("OKRootCertInPack", func(t *testing.T) {
		ca, err := os.ReadFile(filepath.Join(outside, "server.crt"))
		if err != nil {
			t.Fatal(err)
		}
		// The server's certificate is its own CA: verify-ca passes with
		// it, and the login is refused by the server, not by coachd.
		err = load(t, "postgres://app@"+addr+"/app?sslmode=verify-ca&sslrootcert=ca.crt&application_name=coach%20app+1", map[string]string{"ca.crt": string(ca)})
		if !strings.Contains(err.Error(), "no login here for coach app+1") {
			t.Errorf("got %v", err)
		}
		certSent(t)
	})
}
