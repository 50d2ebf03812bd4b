// The console's script: it only enhances (the copy button of a secret shown once); every page
// works without it, and the card pages carry no script at all.

export const COPY_BUTTON_SCRIPT = `
// gatehouse admin console: enhancements only; every page works without this script.
'use strict';
(function () {
  function say(id, text) {
    var status = document.getElementById(id + '-status');
    if (status) status.textContent = text;
  }
  function select(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  var buttons = document.querySelectorAll('button[data-copy]');
  Array.prototype.forEach.call(buttons, function (button) {
    var id = button.getAttribute('data-copy');
    var source = document.getElementById(id);
    if (!source) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var text = source.textContent.trim();
      var copied = navigator.clipboard && window.isSecureContext ? navigator.clipboard.writeText(text) : Promise.reject(new Error('no clipboard'));
      copied.then(
        function () { say(id, 'Copied to the clipboard.'); },
        function () { select(source); say(id, 'Selected: press Ctrl+C (or \\u2318C) to copy.'); }
      );
    });
  });
})();
`.trimStart();

// The passkey buttons of the login and account pages (data-passkey-signin, data-passkey-register):
// hidden until this script finds WebAuthn; a click runs the ceremony with the options the page
// carries (@simplewebauthn/browser, served beside this file) and posts the result in the button's
// own form. The rest of the pages works without it.
export const PASSKEY_SCRIPT = `
'use strict';
(function () {
  var webauthn = window.SimpleWebAuthnBrowser;
  if (!webauthn || !webauthn.browserSupportsWebAuthn()) return;
  // Browsers refuse WebAuthn on an IP address (the server offers passkeys at localhost instead).
  if (/^[0-9.]+$/.test(location.hostname) || location.hostname.charAt(0) === '[') return;
  var buttons = document.querySelectorAll('button[data-passkey-signin], button[data-passkey-register]');
  Array.prototype.forEach.call(buttons, function (button) {
    var form = button.form;
    var field = form && form.querySelector('input[name="credential"]');
    var status = document.getElementById(button.getAttribute('aria-describedby') || '');
    if (!form || !field) return;
    form.hidden = false;
    button.addEventListener('click', function () {
      var options;
      try { options = JSON.parse(button.getAttribute('data-passkey-options')); } catch (e) { return; }
      var ceremony = button.hasAttribute('data-passkey-signin')
        ? webauthn.startAuthentication({ optionsJSON: options })
        : webauthn.startRegistration({ optionsJSON: options });
      button.disabled = true;
      if (status) status.textContent = 'Waiting for your passkey…';
      ceremony.then(
        function (result) { field.value = JSON.stringify(result); form.submit(); },
        function (error) {
          button.disabled = false;
          if (status) status.textContent = 'No passkey was used (' + (error && error.name ? error.name : 'cancelled') + '). Try again, or use your password.';
        }
      );
    });
  });
})();
`.trimStart();
