// Sends one mail with gatehouse's transport (src/platform/mail/transport.ts) to the SMTP URL in
// argv[2], in a process of its own: NODE_EXTRA_CA_CERTS, the one way an operator makes Node trust
// a private CA, is read only when a process starts. Prints "sent" or the error; exit 0 or 1.
import { openMailTransport } from '../../src/platform/mail/transport.js';

const transport = openMailTransport({ smtp: process.argv[2], from: 'gatehouse <no-reply@gatehouse.test>', dataDir: '/nonexistent' }, () => undefined);
transport
  .send({ id: 'tls-check', kind: 'verify', to: 'tls@example.test', subject: 'TLS', text: 'over TLS', html: '<p>over TLS</p>', link: null })
  .then(
    () => {
      process.stdout.write('sent\n');
      transport.close();
    },
    (e: Error) => {
      process.stdout.write(`${e.message}\n`);
      transport.close();
      process.exitCode = 1;
    },
  );
