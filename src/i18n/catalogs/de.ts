import type { Catalog } from '../catalog.ts'

/**
 * German (Deutsch), addressing the reader as "Sie".
 * @public loaded by catalogs/index.ts with `require`, which knip does not follow
 */
export const de: Catalog = {
  // The form page
  'page.title_error': 'Fehler: {title}',
  'page.submit': 'Antwort senden',
  'page.asked_by': 'Anfrage von {sender}',
  'page.answer_by': 'Bitte antworten Sie bis zum {deadline}',
  'page.closes_in': 'Verbleibende Zeit zum Antworten: {duration}.',
  'page.footer':
    'Ihre Antwort erhält nur, wer Ihnen diesen Link geschickt hat. Dieses Formular nimmt nur eine Antwort an.',
  'page.new_tab': '(öffnet sich in einem neuen Tab)',
  'mark.required': '(Pflichtfeld)',
  'mark.optional': '(optional)',

  // Errors, as a 422 page shows them
  'summary.title': 'Bitte prüfen Sie Ihre Angaben',
  'error.prefix': 'Fehler:',
  'error.required.text': 'Geben Sie eine Antwort ein',
  'error.required.textarea': 'Geben Sie eine Antwort ein',
  'error.required.email': 'Geben Sie eine E-Mail-Adresse ein',
  'error.required.number': 'Geben Sie eine Zahl ein',
  'error.required.date': 'Geben Sie ein Datum ein',
  'error.required.select': 'Wählen Sie eine Option aus',
  'error.required.select_multiple': 'Wählen Sie mindestens eine Option aus',
  'error.required.file': 'Wählen Sie eine Datei aus',
  'error.unchecked': 'Setzen Sie das Häkchen, um fortzufahren',
  'error.too_short': { one: 'Geben Sie mindestens ein Zeichen ein', other: 'Geben Sie mindestens {count} Zeichen ein' },
  'error.too_long': { one: 'Geben Sie höchstens ein Zeichen ein', other: 'Geben Sie höchstens {count} Zeichen ein' },
  'error.too_long_by': {
    one: '{limit}. Ihre Eingabe ist ein Zeichen zu lang',
    other: '{limit}. Ihre Eingabe ist {count} Zeichen zu lang',
  },
  'answered.title': 'Beantwortet: {title}',
  'error.too_small': 'Geben Sie eine Zahl von mindestens {min} ein',
  'error.too_large': 'Geben Sie eine Zahl von höchstens {max} ein',
  'error.step': 'Geben Sie eine Zahl in Schritten von {step} ein',
  'error.step_from': 'Geben Sie eine Zahl in Schritten von {step} ein, gezählt ab {min}',
  'error.invalid_format': 'Geben Sie die Antwort im richtigen Format ein',
  'error.invalid_format.text': 'Geben Sie die Antwort in einer einzigen Zeile ein',
  'error.invalid_format.number': 'Geben Sie eine Zahl ein, zum Beispiel {example}',
  'error.pattern': 'Geben Sie die Antwort im geforderten Format ein',
  'error.email': 'Geben Sie eine E-Mail-Adresse im richtigen Format ein, zum Beispiel name@example.com',
  'error.not_an_option': 'Wählen Sie eine der Optionen aus',
  'error.not_unique': 'Wählen Sie jede Option nur einmal aus',
  'error.too_few_selected': {
    one: 'Wählen Sie mindestens eine Option aus',
    other: 'Wählen Sie mindestens {count} Optionen aus',
  },
  'error.too_many_selected': {
    one: 'Wählen Sie höchstens eine Option aus',
    other: 'Wählen Sie höchstens {count} Optionen aus',
  },
  'error.date': 'Geben Sie ein gültiges Datum ein',
  'error.date_too_early': 'Wählen Sie ein Datum ab dem {date}',
  'error.date_too_late': 'Wählen Sie ein Datum bis zum {date}',
  'error.file_too_large': 'Die ausgewählte Datei darf höchstens {size} groß sein',
  'error.file_type': 'Die ausgewählte Datei muss einen dieser Typen haben: {types}',
  'error.control_character': 'Entfernen Sie das unsichtbare Zeichen {character} aus Ihrer Antwort',
  'error.invalid_encoding': 'Ihre Antwort konnte nicht gelesen werden. Bitte geben Sie sie noch einmal ein',
  'error.invalid_value': 'Geben Sie eine gültige Antwort ein',

  // Hints under a label
  'hint.min_length': { one: 'Mindestens ein Zeichen.', other: 'Mindestens {count} Zeichen.' },
  'hint.max_length': { one: 'Höchstens ein Zeichen.', other: 'Höchstens {count} Zeichen.' },
  'hint.length_between': { one: 'Von {min} bis {count} Zeichen.', other: 'Von {min} bis {count} Zeichen.' },
  'hint.number_between': 'Eine Zahl von {min} bis {max}.',
  'hint.number_min': 'Eine Zahl von mindestens {min}.',
  'hint.number_max': 'Eine Zahl von höchstens {max}.',
  'hint.date_between': 'Ein Datum vom {min} bis zum {max}.',
  'hint.date_min': 'Ein Datum ab dem {min}.',
  'hint.date_max': 'Ein Datum bis zum {max}.',
  'hint.date_on': 'Nur der {date}.',
  'date.day': 'Tag',
  'date.month': 'Monat',
  'date.year': 'Jahr',
  'date.example': 'Zum Beispiel: {example}',
  'date.missing_day': 'Das Datum muss einen Tag enthalten',
  'date.missing_month': 'Das Datum muss einen Monat enthalten',
  'date.missing_year': 'Das Datum muss ein Jahr enthalten',
  'date.missing_day_month': 'Das Datum muss einen Tag und einen Monat enthalten',
  'date.missing_day_year': 'Das Datum muss einen Tag und ein Jahr enthalten',
  'date.missing_month_year': 'Das Datum muss einen Monat und ein Jahr enthalten',
  'date.not_real': 'Geben Sie ein Datum ein, das es gibt',
  'date.year_digits': 'Das Jahr muss 4 Ziffern haben',
  'date.on': 'Das Datum muss der {date} sein',
  'hint.file_size': 'Höchstens {size}.',
  'hint.file_types': 'Dateitypen: {types}. Höchstens {size}.',
  'hint.select_any': 'Wählen Sie alles Zutreffende aus.',
  'hint.select_at_least': {
    one: 'Wählen Sie mindestens eine Option aus.',
    other: 'Wählen Sie mindestens {count} Optionen aus.',
  },
  'hint.select_at_most': {
    one: 'Wählen Sie höchstens eine Option aus.',
    other: 'Wählen Sie höchstens {count} Optionen aus.',
  },
  'hint.select_exactly': { one: 'Wählen Sie genau eine Option aus.', other: 'Wählen Sie genau {count} Optionen aus.' },
  'hint.select_between': 'Wählen Sie {min} bis {max} Optionen aus.',

  // Controls
  'select.placeholder': 'Bitte auswählen',
  'select.no_answer': 'Keine Angabe',
  'file.choose': 'Datei auswählen',
  'file.none': 'Keine Datei ausgewählt',
  'file.kept':
    'Sie haben bereits {name} ({size}) hinzugefügt. Die Datei wird mit Ihrer Antwort gesendet, außer Sie entfernen sie oder wählen unten eine andere aus.',
  'file.remove': 'Diese Datei entfernen',
  'file.replace':
    'Sie müssen sie nicht erneut auswählen. Wenn Sie stattdessen eine andere Datei senden möchten, wählen Sie sie hier aus.',
  'file.kind.image': 'Bilder',
  'file.kind.audio': 'Audiodateien',
  'file.kind.video': 'Videos',
  'file.kind.text': 'Textdateien',

  // After sending
  'receipt.title': 'Antwort gesendet: {title}',
  'receipt.heading': 'Ihre Antwort wurde gesendet',
  'receipt.default_message': 'Vielen Dank. Sie müssen nichts weiter tun und können diese Seite schließen.',
  'receipt.sent_at': 'Gesendet am {time}.',
  'receipt.what_you_sent': 'Ihre Angaben',
  'receipt.not_answered': 'Nicht beantwortet',
  'receipt.yes': 'Ja',
  'receipt.no': 'Nein',
  'receipt.file': '{name} ({size})',
  'answered.heading': 'Dieses Formular wurde beantwortet',
  'answered.at': 'Die Antwort wurde am {time} gesendet.',
  'answered.default_message': 'Sie müssen nichts weiter tun und können diese Seite schließen.',

  // Pages for every other outcome
  'status.answered.heading': 'Dieses Formular wurde bereits beantwortet',
  'status.answered.message':
    'Ein Formular nimmt nur eine Antwort an, und für dieses liegt schon eine vor. Was Sie gerade gesendet haben, wurde nicht gespeichert.',
  'status.cancelled.heading': 'Dieses Formular wurde zurückgezogen',
  'status.cancelled.message':
    'Wer es Ihnen geschickt hat, braucht keine Antwort mehr. Deshalb nimmt das Formular keine Antwort mehr an.',
  'status.expired.heading': 'Dieses Formular ist abgelaufen',
  'status.expired.message':
    'Die Frist für eine Antwort ist vorbei. Deshalb nimmt das Formular keine Antwort mehr an. Wenn Sie trotzdem antworten möchten, bitten Sie die Person oder Stelle, die es Ihnen geschickt hat, um einen neuen Link.',
  'status.not_found.heading': 'Formular nicht gefunden',
  'status.not_found.message':
    'Unter dieser Adresse gibt es kein Formular. Prüfen Sie, ob der Link vollständig ist. Möglicherweise wurde das Formular auch gelöscht.',
  'status.cross_site.heading': 'Antwort abgelehnt',
  'status.cross_site.message':
    'Diese Antwort wurde von einer anderen Website gesendet und deshalb nicht angenommen. Öffnen Sie den Link, den Sie erhalten haben, und antworten Sie dort.',
  'status.rate_limited.heading': 'Zu viele Versuche',
  'status.rate_limited.message':
    'In der letzten Minute kamen zu viele Antworten von Ihrer Adresse. Warten Sie einen Moment und versuchen Sie es dann erneut.',
  'status.too_large.heading': 'Zu groß zum Senden',
  'status.too_large.message':
    'Was Sie gesendet haben, ist größer, als dieses Formular annimmt. Wählen Sie kleinere Dateien aus und versuchen Sie es dann erneut.',
  'status.too_large.limits': 'So groß darf die Datei bei jeder Frage höchstens sein:',
  'status.too_large.file_limit': '{label}: höchstens {size}',
  'status.too_slow.heading': 'Das Senden hat zu lange gedauert',
  'status.too_slow.message':
    'Ihre Antwort kam zu langsam an und wurde nicht gespeichert, vielleicht wegen einer schlechten Verbindung. Gehen Sie zurück zum Formular und senden Sie die Antwort noch einmal.',
  'status.busy.heading': 'Vorübergehend überlastet',
  'status.busy.message':
    'Der Server ist gerade zu stark ausgelastet, um Ihre Antwort anzunehmen. Es wurde nichts gespeichert. Gehen Sie zurück zum Formular und senden Sie die Antwort gleich noch einmal.',
  'status.unreadable.heading': 'Antwort nicht lesbar',
  'status.unreadable.message':
    'Was hier angekommen ist, ließ sich nicht als Antwort auf dieses Formular lesen. Gehen Sie zurück zum Formular und senden Sie Ihre Antwort von dort.',
  'status.error.heading': 'Es ist ein Fehler aufgetreten',
  'status.error.message':
    'Ihre Antwort wurde möglicherweise nicht gespeichert. Bitte versuchen Sie es gleich noch einmal.',
  'status.retry_after': {
    one: 'Sie können es in einer Sekunde erneut versuchen.',
    other: 'Sie können es in {count} Sekunden erneut versuchen.',
  },
  'status.back': 'Zurück zum Formular',
  'sent.heading': 'Was Sie gesendet haben',
  'sent.not_recorded': 'Nichts von dem, was Sie gesendet haben, wurde gespeichert.',
  'sent.intro': 'Hier sehen Sie, was Sie gesendet haben, damit Sie eine Kopie aufbewahren können.',
  'sent.copy_label': 'Ihre Antworten als Text',
  'sent.copy_hint': 'Markieren Sie den gesamten Text in diesem Feld und kopieren Sie ihn.',
  'review.title': 'Antworten prüfen – {title}',
  'review.heading': 'Prüfen Sie Ihre Antworten vor dem Senden',
  'review.change': 'Ändern',
  'review.continue': 'Weiter',
  'review.send_heading': 'Antwort jetzt senden',
  'review.send_text': 'Nach dem Senden können Sie Ihre Antwort nicht mehr ändern.',
  'review.lapsed':
    'Ihre Antworten wurden nicht gesendet. Antworten, die auf die Prüfung warten, werden 1 Stunde lang aufbewahrt, und diese Zeit ist abgelaufen. Füllen Sie das Formular bitte erneut aus.',
  'review.lapsed_kept':
    'Ihre Antworten wurden nicht gesendet. Antworten, die auf die Prüfung warten, werden 1 Stunde lang aufbewahrt, und diese Zeit ist abgelaufen. Ihre Antworten sind unten eingetragen: Fügen Sie Dateien bitte erneut hinzu und fahren Sie dann fort.',
}
