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
