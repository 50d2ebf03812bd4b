// The one stylesheet of every page, served as a file (CSP `style-src 'self'`, no inline style):
// shared colours and base rules, then the two page families — one card in the middle
// (`body.card-page`: sign-in, consent, account, errors, the demo callback) and the admin console
// (`body.console`). Light and dark follow the system setting.

export const STYLESHEET = `
:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--text:#1c2230;--muted:#535c6d;--line:#d4d9e2;--soft:#eef1f6;--accent:#2453d6;--accent-soft:#e3eafc;--accent-text:#fff;--danger:#b42318;--danger-soft:#fdecea;--ok:#146c2e;--ok-soft:#e6f4ea;--warn:#7a4b00;--warn-soft:#fff4d6;--focus:#2453d6}
@media (prefers-color-scheme:dark){:root{--bg:#12151c;--card:#1c212b;--text:#e8ebf1;--muted:#a9b1c0;--line:#363d4c;--soft:#242a36;--accent:#7d9dff;--accent-soft:#25304d;--accent-text:#0b0e14;--danger:#ff8a80;--danger-soft:#3a1f1d;--ok:#7dd89a;--ok-soft:#1b3324;--warn:#ffd479;--warn-soft:#3a3016;--focus:#9db6ff}}
*{box-sizing:border-box}
[hidden]{display:none!important}
html{-webkit-text-size-adjust:100%}
a{color:var(--accent);text-underline-offset:2px}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.visually-hidden{position:absolute!important;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
body{margin:0;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
p{margin:0 0 1rem}
form{margin:0}
/* A page of one card in the middle (body.card-page): sign-in, consent, account, errors, the demo callback. */
body.card-page{min-height:100vh;display:flex;align-items:center;justify-content:center;padding:1.5rem}
.card-page main{width:100%;max-width:28rem;overflow-wrap:break-word;background:var(--card);border:1px solid var(--line);border-radius:14px;padding:2rem;box-shadow:0 8px 30px rgba(0,0,0,.06)}
.card-page .brand{margin:0 0 1.25rem;font-size:.85rem;font-weight:600;letter-spacing:.06em;text-transform:uppercase;color:var(--muted)}
.card-page h1{margin:0 0 .5rem;font-size:1.35rem;line-height:1.3}
.card-page .muted{color:var(--muted);font-size:.95rem}
.card-page strong.client{overflow-wrap:anywhere}
.card-page label.field{display:block;margin:1rem 0 .35rem;font-weight:600}
.card-page input[type=text],.card-page input[type=email],.card-page input[type=password]{width:100%;padding:.65rem .75rem;font:inherit;color:inherit;background:transparent;border:1px solid var(--line);border-radius:8px}
.card-page fieldset{margin:1.25rem 0 0;padding:0;border:0}
.card-page legend{padding:0;margin-bottom:.5rem;font-weight:600}
.card-page .choice{display:flex;gap:.65rem;align-items:flex-start;padding:.6rem .75rem;border:1px solid var(--line);border-radius:8px;margin-bottom:.5rem;cursor:pointer}
.card-page .choice input{margin:.3rem 0 0;width:1.05rem;height:1.05rem;accent-color:var(--accent);flex:none}
.card-page .choice span{display:block}
.card-page .choice code{display:block;font-size:.8rem;color:var(--muted)}
.card-page .options{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:.5rem}
.card-page .perms{border:1px solid var(--line);border-radius:8px}
.card-page .perm{display:grid;grid-template-columns:minmax(0,1fr) 5.5rem 5.5rem;align-items:center;gap:.5rem;padding:.45rem .75rem;border-top:1px solid var(--line)}
.card-page .perm:first-child{border-top:0}
.card-page .perm-name{font-weight:600;overflow-wrap:anywhere}
.card-page .perm.perm-items{grid-template-columns:minmax(0,1fr)}
.card-page .perm-items .tick{align-items:flex-start}
.card-page .perm-items .tick input{margin-top:.2rem;flex:none}
.card-page .perm-warning{grid-column:1/-1;margin:0;font-size:.9rem;color:var(--danger)}
.card-page .tick{display:flex;align-items:center;gap:.4rem;cursor:pointer}
.card-page .tick input{width:1.05rem;height:1.05rem;margin:0;accent-color:var(--accent)}
.card-page .actions.sticky button{flex:1 1 5.5rem;padding:.65rem .5rem}
.card-page .actions.sticky{position:sticky;bottom:0;z-index:1;background:var(--card);margin:1rem -.25rem 0;padding:.75rem .25rem;border-top:1px solid var(--line)}
.card-page .options .choice{margin:0;align-items:center}
.card-page .options .choice input{margin:0}
.card-page .actions{display:flex;gap:.75rem;margin-top:1.5rem;flex-wrap:wrap}
.card-page button{flex:1 1 8rem;padding:.7rem 1rem;font:inherit;font-weight:600;border-radius:8px;cursor:pointer;border:1px solid var(--line);background:transparent;color:var(--text)}
.card-page button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
.card-page .switch{margin-top:1rem}
.card-page button.link{flex:none;padding:0;border:0;background:none;color:var(--accent);font-weight:500;font-size:.9rem;text-decoration:underline;text-underline-offset:2px}
.card-page .alert{margin:0 0 1rem;padding:.65rem .75rem;border-radius:8px;border:1px solid var(--danger);color:var(--danger)}
.card-page .target{margin-top:1.25rem;font-size:.85rem;color:var(--muted);overflow-wrap:anywhere}
.card-page dl.values{margin:0 0 1rem;display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem .75rem}
.card-page dl.values dt{font-weight:600}
.card-page dl.values dd{margin:0;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem;overflow-wrap:anywhere}
.card-page section.block{margin-top:1.75rem;padding-top:1.25rem;border-top:1px solid var(--line)}
.card-page h2{margin:0 0 .75rem;font-size:1.05rem}
.card-page ul.apps{list-style:none;margin:0;padding:0}
.card-page ul.apps>li{padding:.85rem .9rem;border:1px solid var(--line);border-radius:10px;margin-bottom:.65rem}
.card-page ul.apps .app-name{font-weight:600;overflow-wrap:anywhere}
.card-page ul.apps ul.scopes{margin:.35rem 0 .5rem;padding-left:1.1rem;font-size:.92rem}
.card-page ul.apps dl{margin:0 0 .6rem;display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.1rem .75rem;font-size:.88rem;color:var(--muted)}
.card-page ul.apps dd{margin:0}
.card-page ul.apps button{flex:none;padding:.45rem .9rem;font-size:.9rem}
.card-page button.danger{border-color:var(--danger);color:var(--danger)}
.card-page section.danger-zone{border-top:2px solid var(--danger)}
.card-page section.danger-zone h2{color:var(--danger)}
.card-page .note{margin:0 0 1rem;padding:.5rem .75rem;border-left:3px solid var(--muted);font-size:.92rem;color:var(--muted)}
.card-page .notice{margin:0 0 1rem;padding:.65rem .75rem;border-radius:8px;border:1px solid var(--line)}
.card-page main.wide{max-width:36rem}
.card-page .small{font-size:.875rem}
.card-page form.passkey{margin-top:.75rem}
.card-page form.passkey .actions{margin-top:.5rem}
.card-page form.signin p.small{margin:.35rem 0 0}
.card-page h3{margin:1.25rem 0 .5rem;font-size:1rem}
.card-page .field-error{margin:.35rem 0 0;font-size:.9rem;font-weight:600;color:var(--danger)}
.card-page input[aria-invalid=true]{border-color:var(--danger);box-shadow:0 0 0 1px var(--danger)}
.card-page input+p.small{margin:.4rem 0 0}
.card-page p.links{margin:1rem 0 0;display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;font-size:.92rem}
.card-page a.button{display:inline-block;padding:.7rem 1rem;border-radius:8px;font-weight:600;text-decoration:none;border:1px solid var(--line);color:var(--text)}
.card-page .actions a.button{flex:1 1 8rem;text-align:center}
.card-page a.button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
/* Second factors (card pages and console): the set-up steps, the QR code, the key, the recovery codes. */
.card-page ol.steps,.console ol.steps{margin:0;padding-left:1.25rem}
.card-page ol.steps>li,.console ol.steps>li{margin:.5rem 0}
.card-page .qr svg,.console .qr svg{display:block;width:11rem;height:11rem;margin:.5rem 0;border:1px solid var(--line);border-radius:6px;background:#fff}
.card-page code.secret,.console code.secret{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.95rem;letter-spacing:.04em;overflow-wrap:anywhere}
.card-page details.uri,.console details.uri{margin-top:.35rem;font-size:.85rem}
.card-page details.uri code,.console details.uri code{display:block;margin-top:.25rem;overflow-wrap:anywhere}
.card-page ul.recovery-codes,.console ul.recovery-codes{list-style:none;margin:.5rem 0 1rem;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(11.5rem,1fr));gap:.4rem}
.card-page ul.recovery-codes code,.console ul.recovery-codes code{display:block;white-space:nowrap;padding:.35rem .5rem;border:1px solid var(--line);border-radius:6px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem;text-align:center}
.card-page pre.snippet{margin:0 0 1rem;padding:.75rem;border:1px solid var(--line);border-radius:8px;font-size:.8rem;line-height:1.45;white-space:pre-wrap;overflow-wrap:anywhere}
@media (max-width:30rem){.card-page main{padding:1.25rem;border-radius:10px}body.card-page{padding:.75rem;align-items:flex-start}.card-page .options{grid-template-columns:repeat(2,minmax(0,1fr))}.card-page .perm{grid-template-columns:minmax(0,1fr) 4.5rem 4.5rem}}
/* The admin console (body.console): a bar with navigation, then the section. */
.console .skip{position:absolute;left:.5rem;top:-3rem;z-index:2;padding:.5rem .75rem;background:var(--card);border:1px solid var(--line);border-radius:8px}
.console .skip:focus{top:.5rem}
.console header.top{background:var(--card);border-bottom:1px solid var(--line)}
.console .bar{max-width:72rem;margin:0 auto;padding:.6rem 1.25rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem}
.console .brand{font-weight:700;letter-spacing:.02em;color:var(--text);text-decoration:none;margin-right:auto}
.console .brand span{color:var(--muted);font-weight:500}
.console nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem}
.console nav a{display:block;padding:.4rem .6rem;border-radius:8px;color:var(--text);text-decoration:none}
.console nav a:hover{background:var(--soft)}
.console nav a[aria-current=page]{background:var(--accent-soft);color:var(--accent);font-weight:600}
.console .who{display:flex;align-items:center;gap:.6rem;font-size:.9rem;color:var(--muted)}
.console main{max-width:72rem;margin:0 auto;padding:1.5rem 1.25rem 3rem}
.console main.narrow{max-width:28rem;padding-top:12vh}
.console h1{font-size:1.5rem;line-height:1.3;margin:0 0 1rem}
.console h2{font-size:1.15rem;margin:0 0 .75rem}
.console .muted{color:var(--muted)}
.console .small{font-size:.875rem}
.console code,.console .mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere}
.console .head{display:flex;flex-wrap:wrap;align-items:baseline;justify-content:space-between;gap:.5rem 1rem;margin-bottom:1rem}
.console .head h1{margin:0}
.console .crumbs{font-size:.9rem;margin:0 0 .5rem}
.console .card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1.25rem;margin:0 0 1.25rem}
.console .card>:last-child{margin-bottom:0}
.console .confirm{max-width:42rem}
.console .confirm dl.props{margin:0 0 1.25rem}
.console .stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(13rem,1fr));gap:1rem;margin:0 0 1.25rem;padding:0;list-style:none}
.console .stats li{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1rem 1.25rem}
.console .stats .n{display:block;font-size:2rem;font-weight:700;line-height:1.2}
.console .stats a{font-weight:600}
.console dl.props{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.4rem 1rem;margin:0}
.console dl.props dt{color:var(--muted)}
.console dl.props dd{margin:0;overflow-wrap:anywhere}
.console table{width:100%;border-collapse:collapse;font-size:.95rem}
.console th,.console td{text-align:left;vertical-align:top;padding:.6rem .75rem;border-bottom:1px solid var(--line)}
.console th{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:600}
.console tbody tr:last-child td{border-bottom:0}
.console td.actions{white-space:nowrap;text-align:right}
.console .table{background:var(--card);border:1px solid var(--line);border-radius:12px;margin:0 0 1.25rem;overflow:hidden}
.console .empty{padding:1rem 1.25rem;margin:0;color:var(--muted)}
.console .tag{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.8rem;font-weight:600;background:var(--soft);color:var(--text)}
.console .tag.on{background:var(--accent-soft);color:var(--accent)}
.console .tag.warn{background:var(--warn-soft);color:var(--warn)}
.console .state{font-size:1.1rem}
.console .field{margin:0 0 1.1rem}
.console .signin-field{margin:0 0 1.1rem}
.console label.field{display:block;font-weight:600;margin:0 0 .3rem}
.console .field>label:not(.choice),.console .field>legend,.console .label{display:block;font-weight:600;margin:0 0 .3rem;padding:0}
.console input[type=text],.console input[type=email],.console input[type=password],.console textarea,.console select{width:100%;max-width:36rem;padding:.55rem .7rem;font:inherit;color:inherit;background:var(--card);border:1px solid var(--muted);border-radius:8px}
.console textarea{min-height:5.5rem;resize:vertical}
.console input[aria-invalid=true],.console textarea[aria-invalid=true],.console select[aria-invalid=true]{border-color:var(--danger);border-width:2px}
.console .hint{display:block;margin:.25rem 0 0;font-size:.875rem;color:var(--muted)}
.console .field-error{display:block;margin:.3rem 0 0;font-size:.9rem;font-weight:600;color:var(--danger)}
.console fieldset{border:0;margin:0 0 1.1rem;padding:0;min-width:0}
.console legend{padding:0}
.console .choices{display:flex;flex-wrap:wrap;gap:.4rem .6rem}
.console .choice{display:inline-flex;align-items:center;gap:.45rem;padding:.4rem .7rem;border:1px solid var(--line);border-radius:8px;background:var(--card);cursor:pointer}
.console .choice input{width:1.05rem;height:1.05rem;margin:0;accent-color:var(--accent)}
.console .row{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start;margin:0 0 1.1rem}
.console .row .field{flex:1 1 12rem;margin:0}
.console .buttons{display:flex;flex-wrap:wrap;gap:.6rem;align-items:center;margin-top:.25rem}
.console button,.console .button{display:inline-block;padding:.55rem 1rem;font:inherit;font-weight:600;line-height:1.4;border-radius:8px;border:1px solid var(--muted);background:var(--card);color:var(--text);cursor:pointer;text-decoration:none;text-align:center}
.console button:hover,.console .button:hover{background:var(--soft)}
.console .primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
.console .primary:hover{background:var(--accent);filter:brightness(1.1)}
.console .danger{background:var(--danger);border-color:var(--danger);color:#fff}
.console .danger:hover{background:var(--danger);filter:brightness(1.1)}
.console .small-button{padding:.25rem .6rem;font-size:.875rem}
.console form.after{margin:.4rem 0 0}
.console button.link{padding:0;border:0;background:none;color:var(--accent);font-weight:500;text-decoration:underline;text-underline-offset:2px}
.console .notice,.console .alert,.console .banner{margin:0 0 1.25rem;padding:.75rem 1rem;border-radius:10px;border:1px solid}
.console .notice{border-color:var(--ok);background:var(--ok-soft);color:var(--ok)}
.console .alert{border-color:var(--danger);background:var(--danger-soft);color:var(--danger)}
.console .alert ul{margin:.35rem 0 0;padding-left:1.2rem}
.console .banner{border-color:var(--warn);background:var(--warn-soft);color:var(--warn)}
.console .secret{display:block;padding:.75rem .9rem;margin:0 0 .6rem;border:1px dashed var(--muted);border-radius:8px;background:var(--soft);font-size:1rem;user-select:all;-webkit-user-select:all;word-break:break-all}
.console .filters{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-end;margin:0 0 1.25rem}
.console .filters .field{margin:0;flex:1 1 12rem}
.console .filters select{max-width:none}
.console .two{display:grid;grid-template-columns:repeat(auto-fit,minmax(20rem,1fr));gap:1.25rem;align-items:start}
.console .two>.card{margin:0}
.console .stack>*+*{margin-top:1.25rem}
@media (max-width:44rem){
.console .bar{padding:.5rem .75rem}
.console nav{order:3;width:100%}
.console nav ul{gap:.15rem}
.console nav a{padding:.35rem .55rem}
.console main{padding:1rem .75rem 2.5rem}
.console main.narrow{padding-top:1.5rem}
.console .card{padding:1rem}
.console table.list thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
.console table.list,.console table.list tbody,.console table.list tr,.console table.list td{display:block;width:100%}
.console table.list tr{padding:.6rem .9rem;border-bottom:1px solid var(--line)}
.console table.list tbody tr:last-child{border-bottom:0}
.console table.list td{display:grid;grid-template-columns:6.5rem minmax(0,1fr);justify-items:start;gap:.75rem;padding:.2rem 0;border:0;overflow-wrap:anywhere}
.console table.list td::before{content:attr(data-label);font-size:.8rem;font-weight:600;color:var(--muted);padding-top:.1rem}
.console table.list td.actions{display:block;padding-top:.5rem;text-align:left;white-space:normal}
.console table.list td.actions::before{content:none}
.console .who-label{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.console dl.props{grid-template-columns:1fr;gap:0}
.console dl.props dd{margin-bottom:.5rem}
.console .two{grid-template-columns:1fr}
}
`.trim();
