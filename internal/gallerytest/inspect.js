// In-page checks of the gallery test (gallery_test.go evaluates this file
// once per page, then calls window.galleryInspect). Everything measured here
// is real browser layout: getBoundingClientRect and computed styles.
(() => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  // "Prometheus URL *" (a required field) is found as "Prometheus URL", as getByLabelText finds it.
  const labelText = (el) => norm(el.textContent).replace(/\s*\*$/, '');

  const rect = (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x + window.scrollX, y: r.y + window.scrollY, w: r.width, h: r.height };
  };

  /**
   * Drawn: connected, at least 1x1 px, neither it nor an ancestor hidden or
   * fully transparent, and its centre not cut off by an ancestor that clips
   * its overflow (a menu scrolled past it).
   */
  const shown = (el) => {
    if (!el || !el.isConnected) {
      return false;
    }
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) {
      return false;
    }
    const cx = r.left + r.width / 2;
    const cy = r.top + r.height / 2;
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.display === 'none' || cs.visibility === 'hidden' || Number(cs.opacity) === 0) {
        return false;
      }
      if (e !== el && e !== document.body && e !== document.documentElement && cs.overflow !== 'visible') {
        const c = e.getBoundingClientRect();
        if (cx < c.left || cx > c.right || cy < c.top || cy > c.bottom) {
          return false;
        }
      }
    }
    return true;
  };

  const isToggle = (el) => el.tagName === 'INPUT' && (el.type === 'radio' || el.type === 'checkbox');

  /** A radio or checkbox is drawn by its label (the input itself is visually hidden in Grafana's kit). */
  const labelsOf = (el) => (el.labels ? Array.from(el.labels) : []);
  const drawn = (el) => shown(el) || (isToggle(el) && labelsOf(el).some(shown));

  const describe = (el) => {
    if (!el || el === document.body) {
      return 'body';
    }
    let d = el.tagName.toLowerCase();
    if (el.id) {
      d += '#' + el.id;
    }
    if (el.type && el.tagName === 'INPUT') {
      d += '[type=' + el.type + ']';
    }
    const name = el.getAttribute('aria-label') || labelsOf(el).map(labelText).join('|');
    if (name) {
      d += ' "' + name + '"';
    } else if (norm(el.textContent)) {
      d += ' "' + norm(el.textContent).slice(0, 40) + '"';
    }
    return d;
  };

  /** The controls a label text names, as Testing Library's getAllByLabelText finds them. */
  const byLabel = (text) => {
    const found = [];
    for (const label of document.querySelectorAll('label')) {
      if (labelText(label) !== text) {
        continue;
      }
      const control = label.htmlFor
        ? document.getElementById(label.htmlFor)
        : label.querySelector('input, textarea, select, button');
      found.push({ label, control });
    }
    for (const el of document.querySelectorAll('[aria-label]')) {
      if (norm(el.getAttribute('aria-label')) === text) {
        found.push({ label: null, control: el });
      }
    }
    for (const el of document.querySelectorAll('[aria-labelledby]')) {
      const ids = el.getAttribute('aria-labelledby').split(/\s+/);
      const name = norm(ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' '));
      if (name === text) {
        found.push({ label: null, control: el });
      }
    }
    return found;
  };

  const valueOf = (el) => {
    if (!el) {
      return null;
    }
    if ('value' in el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT')) {
      return el.value;
    }
    return norm(el.textContent);
  };

  /** Text nodes whose drawn parent contains `text`. */
  const textShown = (text) => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (norm(n.textContent).includes(text) && shown(n.parentElement)) {
        return true;
      }
    }
    // Text split over several nodes (a label and its value): look at elements.
    for (const el of document.body.querySelectorAll('*')) {
      if (el.children.length < 4 && norm(el.textContent).includes(text) && shown(el)) {
        return true;
      }
    }
    return false;
  };

  /** Popovers (menus, tooltips) are drawn over the page on purpose: they are their own layer. */
  const layer = (el) => el.closest('[role="listbox"], [role="tooltip"], [role="dialog"]') || document.body;

  const overlaps = () => {
    const sel =
      'label, input, textarea, select, button, h1, h2, h3, h4, h5, h6, [role="radiogroup"], [role="option"], [role="alert"]';
    const els = Array.from(document.querySelectorAll(sel)).filter((el) => !isToggle(el) && shown(el));
    const rects = els.map((el) => el.getBoundingClientRect());
    const out = [];
    for (let i = 0; i < els.length; i++) {
      for (let j = i + 1; j < els.length; j++) {
        const a = els[i];
        const b = els[j];
        if (a.contains(b) || b.contains(a) || layer(a) !== layer(b)) {
          continue;
        }
        const ra = rects[i];
        const rb = rects[j];
        const ix = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
        const iy = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
        // Borders that touch, or a sub-pixel rounding, are not an overlap.
        if (ix > 1 && iy > 1) {
          out.push(`${describe(a)} and ${describe(b)} overlap by ${Math.round(ix)}x${Math.round(iy)} px`);
        }
      }
    }
    return out;
  };

  /** A box: an element with a border on all four sides (the editor, a group of fields, an input). */
  const isBox = (el) => {
    const cs = getComputedStyle(el);
    return ['Top', 'Right', 'Bottom', 'Left'].every(
      (side) => parseFloat(cs[`border${side}Width`]) > 0 && cs[`border${side}Style`] !== 'none'
    );
  };

  /** Controls that spill out of a box they sit in (the editor itself included): drawn across its border. */
  const outside = (root) => {
    const out = [];
    for (const el of root.querySelectorAll('label, input, textarea, select, button, h3, h6')) {
      if (isToggle(el) || !shown(el)) {
        continue;
      }
      const r = el.getBoundingClientRect();
      for (let box = el.parentElement; box && box !== root.parentElement; box = box.parentElement) {
        if (!isBox(box)) {
          continue;
        }
        const b = box.getBoundingClientRect();
        if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) {
          const where = box === root ? 'its editor' : `the box ${describe(box)}`;
          out.push(`${describe(el)} spills out of ${where} (${Math.round(r.right - b.right)} px right)`);
          break;
        }
      }
    }
    return out;
  };

  /** The open menu: the listbox that is drawn (closed comboboxes keep an empty one). */
  const openMenu = () => Array.from(document.querySelectorAll('[role="listbox"]')).find(shown) || null;

  /**
   * Options of the open menu that contain each text, each scrolled into view
   * as a user would scroll to it and then drawn; the menu's scroll is put
   * back afterwards.
   */
  const menuProblems = (texts) => {
    if (texts.length === 0) {
      return [];
    }
    const menu = openMenu();
    if (!menu) {
      return ['no menu is open'];
    }
    const scrollers = [menu, ...menu.querySelectorAll('*')].filter((e) => e.scrollHeight > e.clientHeight);
    const saved = scrollers.map((e) => e.scrollTop);
    const out = [];
    for (const text of texts) {
      const option = Array.from(menu.querySelectorAll('[role="option"]')).find((o) =>
        norm(o.textContent).includes(text)
      );
      if (!option) {
        out.push(`the menu has no option "${text}"`);
        continue;
      }
      option.scrollIntoView({ block: 'nearest' });
      if (!shown(option)) {
        out.push(`option "${text}" is not drawn (${JSON.stringify(rect(option))})`);
      }
    }
    scrollers.forEach((e, i) => (e.scrollTop = saved[i]));
    return out;
  };

  const secretsShown = () => {
    const found = [];
    const html = document.documentElement.outerHTML;
    for (const secret of window.gallery.planted) {
      if (html.includes(secret)) {
        found.push(`${secret} in the page HTML`);
      }
      for (const el of document.querySelectorAll('input, textarea')) {
        if (el.value.includes(secret)) {
          found.push(`${secret} in the value of ${describe(el)}`);
        }
      }
    }
    return found;
  };

  /**
   * Marks the inputs Tab must reach, in document order, and returns them:
   * every enabled, drawn input, textarea and select, and of each radio group
   * the checked option (Tab enters a radio group once, on its checked radio).
   */
  const markTabStops = () => {
    const all = Array.from(document.querySelectorAll('input, textarea, select')).filter(
      (el) => !el.disabled && el.type !== 'hidden' && el.tabIndex >= 0 && drawn(el)
    );
    const stops = all.filter((el) => {
      if (el.type !== 'radio' || !el.name) {
        return true;
      }
      const group = all.filter((o) => o.type === 'radio' && o.name === el.name);
      const checked = group.find((o) => o.checked);
      return checked ? el === checked : el === group[0];
    });
    stops.forEach((el, i) => (el.dataset.galleryTabStop = String(i)));
    const focusable = document.querySelectorAll(
      'a[href], button, input, textarea, select, [tabindex]:not([tabindex="-1"]), [contenteditable="true"]'
    ).length;
    return { stops: stops.map(describe), focusable };
  };

  /** Where focus is now: the tab stop index (-1 for another element, -2 for none) and whether it is drawn. */
  const focused = () => {
    const a = document.activeElement;
    if (!a || a === document.body || a === document.documentElement) {
      return { stop: -2, what: 'body', shown: false };
    }
    const stop = a.dataset.galleryTabStop === undefined ? -1 : Number(a.dataset.galleryTabStop);
    return { stop, what: describe(a), shown: drawn(a) };
  };

  window.galleryInspect = (spec) => {
    const root = document.querySelector(`[data-gallery-editor="${spec.state}"]`);
    if (!root) {
      return { problems: [`no editor for state ${spec.state} on the page`] };
    }
    const problems = [];
    for (const text of spec.labels || []) {
      const found = byLabel(text);
      if (found.length === 0) {
        problems.push(`no control labelled "${text}"`);
        continue;
      }
      // A label naming no control is skipped when another match names one, as getByLabelText does.
      const named = found.filter(({ control }) => control);
      if (named.length === 0) {
        problems.push(`label "${text}" names no control`);
      }
      for (const { label, control } of named) {
        if (label && !shown(label)) {
          problems.push(`label "${text}" is not drawn (${JSON.stringify(rect(label))})`);
        }
        if (!drawn(control)) {
          problems.push(`control "${text}" (${describe(control)}) is not drawn (${JSON.stringify(rect(control))})`);
        }
      }
    }
    for (const [text, want] of Object.entries(spec.values || {})) {
      const named = byLabel(text).filter(({ control }) => control);
      const got = named.length > 0 ? valueOf(named[0].control) : null;
      if (got !== want) {
        problems.push(`"${text}" has value ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
      }
    }
    for (const text of spec.checked || []) {
      const found = byLabel(text);
      if (found.length === 0 || !found.some(({ control }) => control && control.checked)) {
        problems.push(`"${text}" is not checked`);
      }
    }
    for (const text of spec.hidden || []) {
      if (byLabel(text).some(({ control }) => control)) {
        problems.push(`"${text}" is on the page but should not be`);
      }
    }
    for (const text of spec.texts || []) {
      if (!textShown(text)) {
        problems.push(`text "${text}" is not drawn`);
      }
    }
    problems.push(...menuProblems(spec.menuTexts || []), ...overlaps(), ...outside(root), ...secretsShown());
    const menu = openMenu();
    const clip = rect(root);
    if (menu) {
      const m = rect(menu);
      const x = Math.min(clip.x, m.x);
      const y = Math.min(clip.y, m.y);
      clip.w = Math.max(clip.x + clip.w, m.x + m.w) - x;
      clip.h = Math.max(clip.y + clip.h, m.y + m.h) - y;
      clip.x = x;
      clip.y = y;
    }
    return { problems, clip };
  };
  window.galleryMenuOpen = () => openMenu() !== null;
  window.galleryMarkTabStops = markTabStops;
  window.galleryFocused = focused;
})();
