import type { Catalog } from '../catalog.ts'

/**
 * Greek (Ελληνικά).
 * @public loaded by catalogs/index.ts with `require`, which knip does not follow
 */
export const el: Catalog = {
  // The form page
  'page.title_error': 'Σφάλμα: {title}',
  'page.submit': 'Αποστολή απάντησης',
  'page.asked_by': 'Αίτημα από {sender}',
  'page.answer_by': 'Παρακαλούμε να απαντήσετε έως τις {deadline}',
  'page.closes_in': 'Χρόνος που απομένει για απάντηση: {duration}.',
  'page.footer':
    'Η απάντησή σας πηγαίνει μόνο σε όποιον σας έστειλε αυτόν τον σύνδεσμο. Η φόρμα αυτή δέχεται μία μόνο απάντηση.',
  'page.new_tab': '(ανοίγει σε νέα καρτέλα)',
  'mark.required': '(υποχρεωτικό)',
  'mark.optional': '(προαιρετικό)',

  // Errors, as a 422 page shows them
  'summary.title': 'Υπάρχει πρόβλημα',
  'error.prefix': 'Σφάλμα:',
  'error.required.text': 'Γράψτε μια απάντηση',
  'error.required.textarea': 'Γράψτε μια απάντηση',
  'error.required.email': 'Εισαγάγετε μια διεύθυνση email',
  'error.required.number': 'Εισαγάγετε έναν αριθμό',
  'error.required.date': 'Εισαγάγετε μια ημερομηνία',
  'error.required.select': 'Κάντε μια επιλογή',
  'error.required.select_multiple': 'Κάντε τουλάχιστον μία επιλογή',
  'error.required.file': 'Επιλέξτε ένα αρχείο',
  'error.unchecked': 'Επιλέξτε το πλαίσιο για να συνεχίσετε',
  'error.too_short': { one: 'Γράψτε τουλάχιστον {count} χαρακτήρα', other: 'Γράψτε τουλάχιστον {count} χαρακτήρες' },
  'error.too_long': { one: 'Γράψτε το πολύ {count} χαρακτήρα', other: 'Γράψτε το πολύ {count} χαρακτήρες' },
  'error.too_long_by': {
    one: '{limit}. Έχετε γράψει {count} χαρακτήρα παραπάνω',
    other: '{limit}. Έχετε γράψει {count} χαρακτήρες παραπάνω',
  },
  'answered.title': 'Απαντήθηκε: {title}',
  'error.too_small': 'Εισαγάγετε αριθμό μεγαλύτερο ή ίσο με {min}',
  'error.too_large': 'Εισαγάγετε αριθμό μικρότερο ή ίσο με {max}',
  'error.step': 'Εισαγάγετε αριθμό με βήμα {step}',
  'error.step_from': 'Εισαγάγετε αριθμό με βήμα {step}, ξεκινώντας από το {min}',
  'error.invalid_format': 'Γράψτε την απάντηση στη σωστή μορφή',
  'error.invalid_format.text': 'Γράψτε την απάντηση σε μία γραμμή',
  'error.invalid_format.number': 'Εισαγάγετε αριθμό, για παράδειγμα {example}',
  'error.pattern': 'Γράψτε την απάντηση στη μορφή που ζητείται',
  'error.email': 'Εισαγάγετε διεύθυνση email στη σωστή μορφή, π.χ. name@example.com',
  'error.not_an_option': 'Επιλέξτε μία από τις διαθέσιμες επιλογές',
  'error.not_unique': 'Επιλέξτε την κάθε επιλογή μόνο μία φορά',
  'error.too_few_selected': { one: 'Κάντε τουλάχιστον {count} επιλογή', other: 'Κάντε τουλάχιστον {count} επιλογές' },
  'error.too_many_selected': { one: 'Κάντε το πολύ {count} επιλογή', other: 'Κάντε το πολύ {count} επιλογές' },
  'error.date': 'Εισαγάγετε μια ημερομηνία που υπάρχει',
  'error.date_too_early': 'Επιλέξτε ημερομηνία από τις {date} και μετά',
  'error.date_too_late': 'Επιλέξτε ημερομηνία έως και τις {date}',
  'error.file_too_large': 'Το αρχείο που επιλέξατε πρέπει να είναι έως {size}',
  'error.file_type': 'Το αρχείο που επιλέξατε πρέπει να είναι ενός από αυτούς τους τύπους: {types}',
  'error.control_character': 'Αφαιρέστε τον αόρατο χαρακτήρα {character} από την απάντησή σας',
  'error.invalid_encoding': 'Δεν ήταν δυνατή η ανάγνωση της απάντησής σας· γράψτε την ξανά',
  'error.invalid_value': 'Εισαγάγετε μια έγκυρη απάντηση',

  // Hints under a label
  'hint.min_length': { one: 'Τουλάχιστον {count} χαρακτήρας.', other: 'Τουλάχιστον {count} χαρακτήρες.' },
  'hint.max_length': { one: 'Έως {count} χαρακτήρας.', other: 'Έως {count} χαρακτήρες.' },
  'hint.length_between': { one: 'Από {min} έως {count} χαρακτήρα.', other: 'Από {min} έως {count} χαρακτήρες.' },
  'hint.number_between': 'Αριθμός από {min} έως {max}.',
  'hint.number_min': 'Αριθμός από {min} και πάνω.',
  'hint.number_max': 'Αριθμός έως {max}.',
  'hint.date_between': 'Ημερομηνία από τις {min} έως τις {max}.',
  'hint.date_min': 'Ημερομηνία από τις {min} και μετά.',
  'hint.date_max': 'Ημερομηνία έως και τις {max}.',
  'hint.date_on': 'Μόνο η ημερομηνία {date}.',
  'date.day': 'Ημέρα',
  'date.month': 'Μήνας',
  'date.year': 'Έτος',
  'date.example': 'Για παράδειγμα, {example}',
  'date.missing_day': 'Η ημερομηνία πρέπει να περιλαμβάνει ημέρα',
  'date.missing_month': 'Η ημερομηνία πρέπει να περιλαμβάνει μήνα',
  'date.missing_year': 'Η ημερομηνία πρέπει να περιλαμβάνει έτος',
  'date.missing_day_month': 'Η ημερομηνία πρέπει να περιλαμβάνει ημέρα και μήνα',
  'date.missing_day_year': 'Η ημερομηνία πρέπει να περιλαμβάνει ημέρα και έτος',
  'date.missing_month_year': 'Η ημερομηνία πρέπει να περιλαμβάνει μήνα και έτος',
  'date.not_real': 'Εισαγάγετε μια ημερομηνία που υπάρχει',
  'date.year_digits': 'Το έτος πρέπει να έχει 4 ψηφία',
  'date.on': 'Η ημερομηνία πρέπει να είναι η {date}',
  'hint.file_size': 'Έως {size}.',
  'hint.file_types': 'Τύποι αρχείων: {types}. Έως {size}.',
  'hint.select_any': 'Επιλέξτε όσα ισχύουν.',
  'hint.select_at_least': { one: 'Επιλέξτε τουλάχιστον {count}.', other: 'Επιλέξτε τουλάχιστον {count}.' },
  'hint.select_at_most': { one: 'Επιλέξτε έως {count}.', other: 'Επιλέξτε έως {count}.' },
  'hint.select_exactly': { one: 'Επιλέξτε {count}.', other: 'Επιλέξτε {count}.' },
  'hint.select_between': 'Επιλέξτε από {min} έως {max}.',

  // Controls
  'select.placeholder': 'Επιλέξτε από τη λίστα',
  'select.no_answer': 'Χωρίς απάντηση',
  'file.choose': 'Επιλογή αρχείου',
  'file.none': 'Δεν επιλέχθηκε αρχείο',
  'file.kept':
    'Έχετε ήδη προσθέσει το αρχείο {name} ({size}). Θα σταλεί μαζί με την απάντησή σας, εκτός αν το αφαιρέσετε ή επιλέξετε άλλο αρχείο παρακάτω.',
  'file.remove': 'Αφαίρεση αρχείου',
  'file.replace': 'Δεν χρειάζεται να το επιλέξετε ξανά. Για να στείλετε άλλο αρχείο στη θέση του, επιλέξτε το εδώ.',
  'file.kind.image': 'εικόνες',
  'file.kind.audio': 'αρχεία ήχου',
  'file.kind.video': 'βίντεο',
  'file.kind.text': 'αρχεία κειμένου',

  // After sending
  'receipt.title': 'Η απάντηση στάλθηκε: {title}',
  'receipt.heading': 'Η απάντησή σας στάλθηκε',
  'receipt.default_message':
    'Σας ευχαριστούμε. Δεν χρειάζεται να κάνετε τίποτε άλλο· μπορείτε να κλείσετε αυτή τη σελίδα.',
  'receipt.sent_at': 'Στάλθηκε στις {time}.',
  'receipt.what_you_sent': 'Τι στείλατε',
  'receipt.not_answered': 'Χωρίς απάντηση',
  'receipt.yes': 'Ναι',
  'receipt.no': 'Όχι',
  'receipt.file': '{name} ({size})',
  'answered.heading': 'Αυτή η φόρμα έχει απαντηθεί',
  'answered.at': 'Απαντήθηκε στις {time}.',
  'answered.default_message': 'Δεν χρειάζεται να κάνετε τίποτε άλλο· μπορείτε να κλείσετε αυτή τη σελίδα.',

  // Pages for every other outcome
  'status.answered.heading': 'Αυτή η φόρμα έχει ήδη απαντηθεί',
  'status.answered.message':
    'Κάθε φόρμα δέχεται μία απάντηση και αυτή έχει ήδη μία. Ό,τι στείλατε μόλις τώρα δεν καταχωρίστηκε.',
  'status.cancelled.heading': 'Αυτή η φόρμα ακυρώθηκε',
  'status.cancelled.message':
    'Όποιος την έστειλε δεν χρειάζεται πλέον απάντηση, γι’ αυτό η φόρμα δεν δέχεται απαντήσεις.',
  'status.expired.heading': 'Αυτή η φόρμα έχει λήξει',
  'status.expired.message':
    'Η προθεσμία για απάντηση έχει περάσει, γι’ αυτό η φόρμα δεν δέχεται πλέον απαντήσεις. Αν θέλετε ακόμη να απαντήσετε, ζητήστε νέο σύνδεσμο από όποιον σας την έστειλε.',
  'status.not_found.heading': 'Η φόρμα δεν βρέθηκε',
  'status.not_found.message':
    'Δεν υπάρχει φόρμα σε αυτή τη διεύθυνση. Ελέγξτε ότι ο σύνδεσμος είναι πλήρης· μπορεί επίσης η φόρμα να έχει διαγραφεί.',
  'status.cross_site.heading': 'Η απάντηση απορρίφθηκε',
  'status.cross_site.message':
    'Αυτή η απάντηση στάλθηκε από άλλον ιστότοπο, γι’ αυτό δεν έγινε δεκτή. Ανοίξτε τον σύνδεσμο που λάβατε και απαντήστε από εκεί.',
  'status.rate_limited.heading': 'Πάρα πολλές προσπάθειες',
  'status.rate_limited.message':
    'Ήρθαν πάρα πολλές απαντήσεις από τη διεύθυνσή σας το τελευταίο λεπτό. Περιμένετε λίγο και δοκιμάστε ξανά.',
  'status.too_large.heading': 'Πολύ μεγάλο για αποστολή',
  'status.too_large.message':
    'Αυτό που στείλατε είναι μεγαλύτερο από όσο δέχεται η φόρμα. Επιλέξτε μικρότερα αρχεία και δοκιμάστε ξανά.',
  'status.too_large.limits': 'Το μεγαλύτερο αρχείο που δέχεται κάθε ερώτηση:',
  'status.too_large.file_limit': '{label}: έως {size}',
  'status.too_slow.heading': 'Η αποστολή καθυστέρησε πολύ',
  'status.too_slow.message':
    'Η απάντησή σας έφτασε πολύ αργά και δεν καταχωρίστηκε, ίσως λόγω κακής σύνδεσης. Επιστρέψτε στη φόρμα και στείλτε την ξανά.',
  'status.busy.heading': 'Προσωρινός φόρτος',
  'status.busy.message':
    'Ο διακομιστής είναι πολύ απασχολημένος για να δεχτεί την απάντησή σας αυτή τη στιγμή, γι’ αυτό δεν καταχωρίστηκε τίποτα. Επιστρέψτε στη φόρμα και στείλτε την ξανά σε λίγο.',
  'status.unreadable.heading': 'Η απάντηση δεν έγινε κατανοητή',
  'status.unreadable.message':
    'Αυτό που έφτασε δεν ήταν δυνατό να διαβαστεί ως απάντηση σε αυτή τη φόρμα. Επιστρέψτε στη φόρμα και στείλτε την απάντηση από εκεί.',
  'status.error.heading': 'Παρουσιάστηκε σφάλμα',
  'status.error.message': 'Η απάντησή σας ίσως δεν έχει καταχωριστεί. Δοκιμάστε ξανά σε λίγο.',
  'status.retry_after': {
    one: 'Μπορείτε να δοκιμάσετε ξανά σε {count} δευτερόλεπτο.',
    other: 'Μπορείτε να δοκιμάσετε ξανά σε {count} δευτερόλεπτα.',
  },
  'status.back': 'Επιστροφή στη φόρμα',
  'sent.heading': 'Τι στείλατε',
  'sent.not_recorded': 'Τίποτα από όσα στείλατε δεν καταχωρίστηκε.',
  'sent.intro': 'Ακολουθεί ό,τι στείλατε, ώστε να κρατήσετε ένα αντίγραφο.',
  'sent.copy_label': 'Οι απαντήσεις σας ως κείμενο',
  'sent.copy_hint': 'Επιλέξτε όλο το κείμενο σε αυτό το πλαίσιο και αντιγράψτε το.',
  'review.title': 'Ελέγξτε τις απαντήσεις σας – {title}',
  'review.heading': 'Ελέγξτε τις απαντήσεις σας πριν από την αποστολή',
  'review.change': 'Αλλαγή',
  'review.continue': 'Συνέχεια',
  'review.send_heading': 'Αποστολή της απάντησης',
  'review.send_text': 'Μετά την αποστολή δεν θα μπορείτε να αλλάξετε την απάντησή σας.',
  'review.lapsed':
    'Οι απαντήσεις σας δεν στάλθηκαν. Οι απαντήσεις που περιμένουν έλεγχο διατηρούνται για 1 ώρα, και ο χρόνος αυτός πέρασε. Συμπληρώστε ξανά τη φόρμα.',
  'review.lapsed_kept':
    'Οι απαντήσεις σας δεν στάλθηκαν. Οι απαντήσεις που περιμένουν έλεγχο διατηρούνται για 1 ώρα, και ο χρόνος αυτός πέρασε. Οι απαντήσεις σας είναι συμπληρωμένες παρακάτω: προσθέστε ξανά τυχόν αρχεία και συνεχίστε.',
}
