// A console block's copy button copies its commands alone: no "$ " prompt, no output, so what
// is pasted into a shell runs. A command continued with a trailing backslash keeps its lines.
// Other blocks (bash, yaml, json) copy as Material copies them.
"use strict";

function commandsOf(text) {
  const commands = [];
  let continued = false;
  for (const line of text.split("\n")) {
    if (continued) {
      commands.push(line);
    } else if (line.startsWith("$ ")) {
      commands.push(line.slice(2));
    } else {
      continue;
    }
    continued = line.endsWith("\\");
  }
  return commands.join("\n") + "\n";
}

// capture: this runs before Material's own copy, which it then stops
document.addEventListener(
  "click",
  (event) => {
    // the copy button: .md-code__button in this Material, .md-clipboard in earlier ones
    const button = event.target.closest('[data-md-type="copy"], .md-clipboard');
    const code = button && document.querySelector(button.dataset.clipboardTarget);
    if (!code || !code.querySelector(".gp")) return; // a console block has prompts
    event.stopImmediatePropagation();
    event.preventDefault();
    navigator.clipboard.writeText(commandsOf(code.textContent)).then(() => {
      button.dataset.copied = "commands";
    });
  },
  true,
);
