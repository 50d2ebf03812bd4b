import { createHash } from 'node:crypto';

// The console's two static files, served from its own URL (CSP `style-src 'self'; script-src
// 'self'`): the stylesheet, and a small script that only enhances (the copy button). Their URLs
// carry a hash of the content, so a browser may keep them while they do not change.

const CSS = `
:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--text:#1c2230;--muted:#535c6d;--line:#d4d9e2;--soft:#eef1f6;--accent:#2453d6;--accent-soft:#e3eafc;--accent-text:#fff;--danger:#b42318;--danger-soft:#fdecea;--ok:#146c2e;--ok-soft:#e6f4ea;--warn:#7a4b00;--warn-soft:#fff4d6;--focus:#2453d6}
@media (prefers-color-scheme:dark){:root{--bg:#12151c;--card:#1c212b;--text:#e8ebf1;--muted:#a9b1c0;--line:#363d4c;--soft:#242a36;--accent:#7d9dff;--accent-soft:#25304d;--accent-text:#0b0e14;--danger:#ff8a80;--danger-soft:#3a1f1d;--ok:#7dd89a;--ok-soft:#1b3324;--warn:#ffd479;--warn-soft:#3a3016;--focus:#9db6ff}}
*{box-sizing:border-box}
[hidden]{display:none!important}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
a{color:var(--accent);text-underline-offset:2px}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:.5rem;top:-3rem;z-index:2;padding:.5rem .75rem;background:var(--card);border:1px solid var(--line);border-radius:8px}
.skip:focus{top:.5rem}
.visually-hidden{position:absolute!important;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
header.top{background:var(--card);border-bottom:1px solid var(--line)}
.bar{max-width:72rem;margin:0 auto;padding:.6rem 1.25rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem}
.brand{font-weight:700;letter-spacing:.02em;color:var(--text);text-decoration:none;margin-right:auto}
.brand span{color:var(--muted);font-weight:500}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem}
nav a{display:block;padding:.4rem .7rem;border-radius:8px;color:var(--text);text-decoration:none}
nav a:hover{background:var(--soft)}
nav a[aria-current=page]{background:var(--accent-soft);color:var(--accent);font-weight:600}
.who{display:flex;align-items:center;gap:.6rem;font-size:.9rem;color:var(--muted)}
main{max-width:72rem;margin:0 auto;padding:1.5rem 1.25rem 3rem}
main.narrow{max-width:28rem;padding-top:12vh}
h1{font-size:1.5rem;line-height:1.3;margin:0 0 1rem}
h2{font-size:1.15rem;margin:0 0 .75rem}
p{margin:0 0 1rem}
.muted{color:var(--muted)}
.small{font-size:.875rem}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere}
.head{display:flex;flex-wrap:wrap;align-items:baseline;justify-content:space-between;gap:.5rem 1rem;margin-bottom:1rem}
.head h1{margin:0}
.crumbs{font-size:.9rem;margin:0 0 .5rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1.25rem;margin:0 0 1.25rem}
.card>:last-child{margin-bottom:0}
.confirm{max-width:42rem}
.confirm dl.props{margin:0 0 1.25rem}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(13rem,1fr));gap:1rem;margin:0 0 1.25rem;padding:0;list-style:none}
.stats li{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1rem 1.25rem}
.stats .n{display:block;font-size:2rem;font-weight:700;line-height:1.2}
.stats a{font-weight:600}
dl.props{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.4rem 1rem;margin:0}
dl.props dt{color:var(--muted)}
dl.props dd{margin:0;overflow-wrap:anywhere}
table{width:100%;border-collapse:collapse;font-size:.95rem}
th,td{text-align:left;vertical-align:top;padding:.6rem .75rem;border-bottom:1px solid var(--line)}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:600}
tbody tr:last-child td{border-bottom:0}
td.actions{white-space:nowrap;text-align:right}
.table{background:var(--card);border:1px solid var(--line);border-radius:12px;margin:0 0 1.25rem;overflow:hidden}
.empty{padding:1rem 1.25rem;margin:0;color:var(--muted)}
.tag{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.8rem;font-weight:600;background:var(--soft);color:var(--text)}
.tag.on{background:var(--accent-soft);color:var(--accent)}
.tag.warn{background:var(--warn-soft);color:var(--warn)}
.state{font-size:1.1rem}
form{margin:0}
.field{margin:0 0 1.1rem}
.field>label:not(.choice),.field>legend,.label{display:block;font-weight:600;margin:0 0 .3rem;padding:0}
input[type=text],input[type=password],textarea,select{width:100%;max-width:36rem;padding:.55rem .7rem;font:inherit;color:inherit;background:var(--card);border:1px solid var(--muted);border-radius:8px}
textarea{min-height:5.5rem;resize:vertical}
input[aria-invalid=true],textarea[aria-invalid=true],select[aria-invalid=true]{border-color:var(--danger);border-width:2px}
.hint{display:block;margin:.25rem 0 0;font-size:.875rem;color:var(--muted)}
.field-error{display:block;margin:.3rem 0 0;font-size:.9rem;font-weight:600;color:var(--danger)}
fieldset{border:0;margin:0 0 1.1rem;padding:0;min-width:0}
legend{padding:0}
.choices{display:flex;flex-wrap:wrap;gap:.4rem .6rem}
.choice{display:inline-flex;align-items:center;gap:.45rem;padding:.4rem .7rem;border:1px solid var(--line);border-radius:8px;background:var(--card);cursor:pointer}
.choice input{width:1.05rem;height:1.05rem;margin:0;accent-color:var(--accent)}
.row{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start;margin:0 0 1.1rem}
.row .field{flex:1 1 12rem;margin:0}
.buttons{display:flex;flex-wrap:wrap;gap:.6rem;align-items:center;margin-top:.25rem}
button,.button{display:inline-block;padding:.55rem 1rem;font:inherit;font-weight:600;line-height:1.4;border-radius:8px;border:1px solid var(--muted);background:var(--card);color:var(--text);cursor:pointer;text-decoration:none;text-align:center}
button:hover,.button:hover{background:var(--soft)}
.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
.primary:hover{background:var(--accent);filter:brightness(1.1)}
.danger{background:var(--danger);border-color:var(--danger);color:#fff}
.danger:hover{background:var(--danger);filter:brightness(1.1)}
.small-button{padding:.25rem .6rem;font-size:.875rem}
button.link{padding:0;border:0;background:none;color:var(--accent);font-weight:500;text-decoration:underline;text-underline-offset:2px}
.notice,.alert,.banner{margin:0 0 1.25rem;padding:.75rem 1rem;border-radius:10px;border:1px solid}
.notice{border-color:var(--ok);background:var(--ok-soft);color:var(--ok)}
.alert{border-color:var(--danger);background:var(--danger-soft);color:var(--danger)}
.alert ul{margin:.35rem 0 0;padding-left:1.2rem}
.banner{border-color:var(--warn);background:var(--warn-soft);color:var(--warn)}
.secret{display:block;padding:.75rem .9rem;margin:0 0 .6rem;border:1px dashed var(--muted);border-radius:8px;background:var(--soft);font-size:1rem;user-select:all;-webkit-user-select:all;word-break:break-all}
.filters{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-end;margin:0 0 1.25rem}
.filters .field{margin:0;flex:1 1 12rem}
.filters select{max-width:none}
.two{display:grid;grid-template-columns:repeat(auto-fit,minmax(20rem,1fr));gap:1.25rem;align-items:start}
.two>.card{margin:0}
.stack>*+*{margin-top:1.25rem}
@media (max-width:44rem){
.bar{padding:.5rem .75rem}
nav{order:3;width:100%}
nav ul{gap:.15rem}
nav a{padding:.35rem .55rem}
main{padding:1rem .75rem 2.5rem}
main.narrow{padding-top:1.5rem}
.card{padding:1rem}
table.list thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table.list,table.list tbody,table.list tr,table.list td{display:block;width:100%}
table.list tr{padding:.6rem .9rem;border-bottom:1px solid var(--line)}
table.list tbody tr:last-child{border-bottom:0}
table.list td{display:grid;grid-template-columns:6.5rem minmax(0,1fr);justify-items:start;gap:.75rem;padding:.2rem 0;border:0}
table.list td::before{content:attr(data-label);font-size:.8rem;font-weight:600;color:var(--muted);padding-top:.1rem}
table.list td.actions{display:block;padding-top:.5rem;text-align:left;white-space:normal}
table.list td.actions::before{content:none}
.who-label{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
dl.props{grid-template-columns:1fr;gap:0}
dl.props dd{margin-bottom:.5rem}
.two{grid-template-columns:1fr}
}
`.trim();

const JS = `
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

function asset(body: string, type: string) {
  const version = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  return { body, type, version };
}

export const ASSETS = {
  'console.css': asset(CSS, 'text/css; charset=utf-8'),
  'console.js': asset(JS, 'text/javascript; charset=utf-8'),
} as const;

export type AssetName = keyof typeof ASSETS;

/** An asset's URL under the console, versioned by its content. */
export function assetUrl(base: string, name: AssetName): string {
  return `${base}/assets/${name}?v=${ASSETS[name].version}`;
}
